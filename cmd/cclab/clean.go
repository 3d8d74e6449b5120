package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"cclab/internal/rcuexpedite"
	"cclab/internal/runid"
	"cclab/kmod/lawload"
	"cclab/orchestrator/cleanup"
)

func newCleanCmd() *cobra.Command {
	var run string
	var jsonOut, all bool
	cmd := &cobra.Command{
		Use:   "clean (--run ID | --all)",
		Short: "Remove what a cclab run made (--run ID), or what every run made (--all)",
		Long: "Removes namespaces named cclab-<id>-*, /sys/fs/bpf/cclab-<id>, /run/cclab/<id> and kills\n" +
			"the processes a run recorded or that live in its namespaces, and puts /sys/kernel/rcu_expedited\n" +
			"back if a run that held it was killed. Nothing else is touched. --run ID does it for one\n" +
			"run; --all for every run on this machine, live ones and other users' included.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if run != "" && all {
				return fmt.Errorf("--run and --all: give one")
			}
			if run == "" && !all {
				return fmt.Errorf("say what to clean: --run ID for one run (its id: `cclab topo up` and `cclab run` print it), or --all for every run on this machine, live ones and other users' included")
			}
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
			// Reading the law claims removes those of runs that died.
			if _, cerr := lawload.LiveClaims(lawload.Options{}); cerr != nil {
				err = errors.Join(err, cerr)
			}
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
	cmd.Flags().StringVar(&run, "run", "", "clean this run id")
	cmd.Flags().BoolVar(&all, "all", false, "clean every run on this machine")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print what was removed as JSON")
	return cmd
}
