package main

import (
	"fmt"

	"cclab/orchestrator/runner"

	"github.com/spf13/cobra"
)

func newCheckCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "check EXPERIMENT...",
		Short: "Validate experiment files, their topologies and variants without root or the kernel",
		Long: `Check reads each experiment file as run does: the file (every error at
file:line:column), its topology, its law settings against the law table
(ranges, units, the relations between parameters, checked in user space
by the law core's own check), its variants and the flows of each compared
congestion control. It loads nothing into the kernel, builds no
namespaces and writes nothing: any user may run it. A congestion control
counts as present when cclab knows it (its laws, the kernel's own,
the file's variants); run says whether this machine has it.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			bad := 0
			for _, path := range args {
				p, err := runner.Check(path)
				if err != nil {
					bad++
					fmt.Fprintln(cmd.ErrOrStderr(), err)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: ok (%d run(s), %d flows in the first)\n", path, len(p.Variants), len(p.Variants[0].Flows))
			}
			if bad > 0 {
				return fmt.Errorf("%d of %d experiment files have errors", bad, len(args))
			}
			return nil
		},
	}
}
