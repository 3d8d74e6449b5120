// Command cclab is the datacenter congestion-control laboratory: it builds
// emulated datacenter networks out of network namespaces, loads congestion
// control laws, runs workloads and analyses the results.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	// SIGINT/SIGTERM cancel the context; long operations tear down what they
	// built when it is cancelled.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	root := newRootCmd()
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "cclab:", err)
		stop()
		var ee exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
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
	)
	return root
}
