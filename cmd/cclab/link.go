package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"cclab/orchestrator/linkchange"
	"cclab/orchestrator/live"
)

func newLinkCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "link",
		Short: "Change a live topology's links (rate, delay, buffer, state)",
	}
	cmd.AddCommand(newLinkSetCmd())
	return cmd
}

func newLinkSetCmd() *cobra.Command {
	var run string
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "set [--run ID] LINK name=value...",
		Short: "Change a link while traffic flows; returns once the change is in force",
		Long: `LINK is a:b (the link between nodes a and b, both directions), a>b (only
a's port towards b: rate and buffer), or a tier name (every link of the
tier: host, edge_agg, agg_core, ... as cclab topo show lists them).
Fields: rate=100Mbit, delay=500us (both directions; the delay line applies
it without reordering), buffer=256KB, state=up|down.
Every field is checked before anything changes; a change that fails half
way is undone.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := linkchange.ParseArgs(args[0], args[1:])
			if err != nil {
				return err
			}
			id, err := live.Pick(run)
			if err != nil {
				return err
			}
			c, err := live.Dial(cmd.Context(), id)
			if err != nil {
				return err
			}
			defer c.Close()
			rec, err := c.SetLink(cmd.Context(), req)
			if err != nil {
				return err
			}
			if jsonOut {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(rec)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s on %s: in force after %v\n", describeRequest(rec.Request), strings.Join(rec.Links, " "), rec.Took)
			return nil
		},
	}
	cmd.Flags().StringVar(&run, "run", "", "run id (default: the one topology up)")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the change's record as JSON")
	return cmd
}

// describeRequest writes a change as its command line would.
func describeRequest(r linkchange.Request) string {
	parts := []string{r.Target}
	for _, kv := range [][2]string{{"rate", r.Rate}, {"delay", r.Delay}, {"buffer", r.Buffer}, {"state", r.State}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	return strings.Join(parts, " ")
}
