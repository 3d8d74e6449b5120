package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"cclab/internal/rcuexpedite"
	"cclab/internal/runid"
	"cclab/orchestrator/cleanup"
)

func newCleanCmd() *cobra.Command {
	var run string
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "clean",
		Short: "Remove what cclab runs left behind (all runs, or one with --run)",
		Long: "Removes namespaces named cclab-<id>-*, /sys/fs/bpf/cclab-<id>, /run/cclab/<id> and kills\n" +
			"the processes a run recorded or that live in its namespaces, and puts /sys/kernel/rcu_expedited\n" +
			"back if a run that held it was killed. Nothing else is touched.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var reps []cleanup.Report
			var err error
			if run != "" {
				id, perr := runid.Parse(run)
				if perr != nil {
					return perr
				}
				var rep cleanup.Report
				rep, err = cleanup.Clean(cmd.Context(), id)
				reps = []cleanup.Report{rep}
			} else {
				reps, err = cleanup.CleanAll(cmd.Context())
			}
			// A run killed while it held rcu_expedited never put it back
			// (internal/rcuexpedite); whatever the runs left, settle it.
			restored, serr := rcuexpedite.System.Settle()
			err = errors.Join(err, serr)
			if jsonOut {
				if reps == nil {
					reps = []cleanup.Report{}
				}
				if jerr := json.NewEncoder(os.Stdout).Encode(reps); jerr != nil {
					return jerr
				}
				return err
			}
			found := false
			for _, r := range reps {
				if r.Empty() {
					continue
				}
				found = true
				fmt.Printf("run %s: %d namespaces, %d processes killed, %d cgroups", r.ID, len(r.Namespaces), len(r.Killed), len(r.Cgroups))
				if r.BPFDir != "" {
					fmt.Printf(", removed %s", r.BPFDir)
				}
				if r.StateDir != "" {
					fmt.Printf(", removed %s", r.StateDir)
				}
				fmt.Println()
			}
			if restored != "" {
				found = true
				fmt.Printf("rcu_expedited: restored %s (a run holding it was killed)\n", restored)
			}
			if !found {
				fmt.Println("nothing to clean")
			}
			return err
		},
	}
	cmd.Flags().StringVar(&run, "run", "", "clean only this run id")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print what was removed as JSON")
	return cmd
}
