package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"cclab/orchestrator/netbuild"
	"cclab/topology"
)

func newTopoBenchCmd() *cobra.Command {
	var rounds int
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "bench [FILE...]",
		Short: "Time building and tearing down topologies (default: topologies/fattree-k4.yaml and fattree-k8.yaml)",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				args = []string{"topologies/fattree-k4.yaml", "topologies/fattree-k8.yaml"}
			}
			var results []netbuild.BenchResult
			for _, f := range args {
				p, err := topology.Load(f)
				if err != nil {
					return err
				}
				fmt.Fprintf(os.Stderr, "%s: %d namespaces, %d links, %d rounds\n", p.Name, len(p.Nodes), len(p.Links), rounds)
				r, err := netbuild.Bench(cmd.Context(), p, netbuild.DefaultOptions(), rounds, func(i int, up, down time.Duration) {
					fmt.Fprintf(os.Stderr, "  round %d: up %v, down %v\n", i+1, up.Round(time.Millisecond), down.Round(time.Millisecond))
				})
				if err != nil {
					return err
				}
				results = append(results, r)
			}
			if jsonOut {
				return json.NewEncoder(os.Stdout).Encode(results)
			}
			fmt.Printf("%-20s %6s %6s %10s %10s %10s %10s\n", "TOPOLOGY", "NETNS", "LINKS", "UP MED", "UP MAX", "DOWN MED", "DOWN MAX")
			for _, r := range results {
				fmt.Printf("%-20s %6d %6d %10v %10v %10v %10v\n", r.Name, r.Namespaces, r.Links,
					netbuild.Median(r.Up).Round(time.Millisecond), maxDur(r.Up).Round(time.Millisecond),
					netbuild.Median(r.Down).Round(time.Millisecond), maxDur(r.Down).Round(time.Millisecond))
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&rounds, "rounds", 5, "builds per topology")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print results as JSON")
	return cmd
}

func maxDur(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}
