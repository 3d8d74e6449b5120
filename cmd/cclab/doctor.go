package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"cclab/orchestrator/doctor"
)

func newDoctorCmd() *cobra.Command {
	var asJSON bool
	var lock string
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check what a run needs of this machine (exit 0 ready, 69 never on this node, 75 not now)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cs := doctor.Run(cmd.Context(), doctor.Options{LockPath: lock})
			if asJSON {
				if err := json.NewEncoder(cmd.OutOrStdout()).Encode(cs); err != nil {
					return err
				}
			} else {
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
				for _, c := range cs {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, c.Severity, c.Detail)
				}
				tw.Flush()
			}
			switch code := doctor.Exit(cs); code {
			case doctor.ExitNever:
				return exitError{code, fmt.Errorf("this node cannot run cclab as it is")}
			case doctor.ExitRetry:
				return exitError{code, fmt.Errorf("this node cannot run cclab now; try again")}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the checks as JSON")
	cmd.Flags().StringVar(&lock, "lock", "", "the host lock to check (default /run/cclab/host.lock)")
	return cmd
}
