// Command cclab is the datacenter congestion-control laboratory: it builds
// emulated datacenter networks out of network namespaces, loads congestion
// control laws, runs workloads and analyses the results.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"cclab/internal/interrupt"
)

// startParent is the parent's pid, read while Go initialises the program:
// the parent-death signal belongs to the thread that asks for it, and
// initialisation runs on the main thread, which lives as long as the
// process (interrupt.DieWithParent).
var startParent, deathSignalErr = interrupt.DieWithParent()

func main() {
	if deathSignalErr != nil {
		fmt.Fprintf(os.Stderr, "cclab: warning: a run will not tear down when its parent dies: %v\n", deathSignalErr)
	}
	// Every signal that ends the command (INT, TERM, HUP, PIPE on a broken
	// stdout or stderr, the parent's death) cancels the context; long
	// operations tear down what they built when it is cancelled.
	ctx, stop := interrupt.Watch(context.Background(), startParent)
	defer stop()

	root := newRootCmd()
	if err := root.ExecuteContext(ctx); err != nil {
		// Ignored write error: stderr may be the broken pipe.
		fmt.Fprintln(os.Stderr, "cclab:", err)
		stop()
		var ee exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
		}
		if sig := interrupt.Cause(ctx); sig != nil {
			os.Exit(sig.ExitCode())
		}
		os.Exit(1)
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "cclab",
		Short:         "A laboratory for datacenter congestion control on the real Linux TCP stack",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
		newVersionCmd(),
		newTopoCmd(),
		newCleanCmd(),
		newRunCmd(),
		newCheckCmd(),
		newIntCmd(),
		newAnalyzeCmd(),
		newCompareCmd(),
		newLawCmd(),
		newVMCmd(),
		newCCCmd(),
		newReproduceCmd(),
		newCalibrateCmd(),
		newSweepCmd(),
		newDoctorCmd(),
		newExecCmd(),
		newLinkCmd(),
		newWatchCmd(),
		newEnvelopeCmd(),
	)
	return root
}
