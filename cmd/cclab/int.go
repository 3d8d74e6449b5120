package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"cclab/internal/runid"
	"cclab/tcopt/agent"
)

func newIntCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "int",
		Short: "The INT telemetry option: host agent state",
	}
	cmd.AddCommand(newIntStatsCmd())
	return cmd
}

func newIntStatsCmd() *cobra.Command {
	var asJSON bool
	var run string
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Print the INT host agent's counters of each run (or of --run)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var ids []runid.ID
			if run != "" {
				id, err := runid.Parse(run)
				if err != nil {
					return err
				}
				ids = []runid.ID{id}
			} else {
				var err error
				if ids, err = agent.Runs(); err != nil {
					return err
				}
			}
			all := map[string]agent.Stats{}
			var kept []runid.ID
			for _, id := range ids {
				st, err := agent.RunStats(id)
				if err != nil && run == "" && errors.Is(err, fs.ErrNotExist) {
					continue // that run's agent detached since the listing
				}
				if err != nil {
					return err
				}
				all[string(id)] = st
				kept = append(kept, id)
			}
			ids = kept
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(all)
			}
			if len(ids) == 0 {
				fmt.Fprintln(out, "no INT agent attached")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "run\toptions written\techoes written\techoes truncated\tforwards parsed\techoes parsed\tmalformed\tbad records\treserve failed\t")
			for _, id := range ids {
				s := all[string(id)]
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t\n", id, s.OptionsWritten, s.EchoesWritten,
					s.EchoesTruncated, s.ForwardsParsed, s.EchoesParsed, s.Malformed, s.BadRecords, s.ReserveFailed)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: {run id: counters}")
	cmd.Flags().StringVar(&run, "run", "", "only this run id")
	return cmd
}
