package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"cclab/internal/runid"
	"cclab/orchestrator/fidelity"
	"cclab/orchestrator/runner"

	"github.com/spf13/cobra"
)

func newRunCmd() *cobra.Command {
	var out, id string
	var asJSON, strict, quiet, replace, profile bool
	cmd := &cobra.Command{
		Use:   "run EXPERIMENT",
		Short: "Run an experiment (experiments/*.yaml) and write its run directory",
		Long: `Run builds the experiment's topology, runs its workload once per compared
congestion control, captures every host port and writes a run directory
(docs/run-directory.md) under --out. Progress goes to stderr (with the
time left: per variant, and the workload's planned end; none with
--quiet); a comparison
table and the run directory's path to stdout (JSON with --json).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			logw := cmd.ErrOrStderr()
			if quiet {
				logw = io.Discard
			}
			opt := runner.Options{Out: out, Log: logw, Versions: buildVersion(), Strict: strict}
			if id != "" {
				rid, err := runid.Parse(id)
				if err != nil {
					return err
				}
				opt.ID = rid
				if err := refuseLive(rid, replace); err != nil {
					return err
				}
			}
			p, err := runner.Prepare(args[0])
			if err != nil {
				return err
			}
			if profile {
				p.Exp.Profile = true
			}
			printSkipped(logw, p.Skipped)
			if note, ok := p.Plan.PlumbingNote(); ok {
				fmt.Fprintf(logw, "note: %s\n", note)
			}
			if opt.ID == "" {
				opt.ID = runid.New()
			}
			fmt.Fprintf(logw, "run %s: %s, %d flows per run, %d run(s)\n", opt.ID, p.Exp.Name, len(p.Variants[0].Flows), len(p.Variants))
			res, err := runner.Run(cmd.Context(), p, opt)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(res)
			}
			printSummary(cmd.OutOrStdout(), res)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "results", "parent directory of run directories")
	cmd.Flags().StringVar(&id, "run", "", "run id (default: a fresh one); an id that is up is refused (see --replace)")
	cmd.Flags().BoolVar(&replace, "replace", false, "tear down whatever of the --run id is up (a live topology or run, or a killed one's leftovers) first")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "no progress on stderr (the summary still prints)")
	cmd.Flags().BoolVar(&profile, "profile", false, "record where each variant's CPU time went (perf; cpu_cost.txt in its directory), as `profile: true`")
	cmd.Flags().BoolVar(&strict, "strict", false, "fail when a variant's emulation is degraded (docs/fidelity.md)")
	return cmd
}

// printFidelity heads the summary: whether the emulation held in every
// variant, and why not where it did not (docs/fidelity.md).
func printFidelity(w io.Writer, res *runner.Result) {
	var bad []runner.Summary
	for _, s := range res.Runs {
		if s.Fidelity != fidelity.Faithful {
			bad = append(bad, s)
		}
	}
	if len(bad) == 0 {
		fmt.Fprintf(w, "emulation: faithful in all %d variants\n\n", len(res.Runs))
		return
	}
	fmt.Fprintf(w, "emulation: DEGRADED in %d of %d variants: their numbers are not results (run.json fidelity)\n", len(bad), len(res.Runs))
	for _, s := range bad {
		fmt.Fprintf(w, "  %s: %s\n", s.CC, strings.Join(s.FidelityReasons, "; "))
	}
	fmt.Fprintln(w)
}

func ms(ns int64) string { return fmt.Sprintf("%.3f", float64(ns)/1e6) }

func printSummary(w io.Writer, res *runner.Result) {
	printFidelity(w, res)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "cc\temulation\tok\tfailed\tmedian FCT ms\tp99 FCT ms\tp50 slowdown\tp99 slowdown\tgoodput Mbit/s\tcpu sat.\tcapture drops\t")
	for _, s := range res.Runs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%.2f\t%.2f\t%.1f\t%.0f%%\t%d\t\n", s.CC, s.Fidelity, s.OK, s.Failed,
			ms(s.MedianFCTNs), ms(s.P99FCTNs), s.MedianSlowdown, s.P99Slowdown, float64(s.GoodputBps)/1e6,
			100*s.CPUSaturated, s.CaptureDrops)
	}
	tw.Flush()
	if len(res.Runs) > 0 && len(res.Runs[0].Groups) > 1 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "cc\tgroup\tok\tfailed\tmedian FCT ms\tp99 FCT ms\tp99 slowdown\t")
		for _, s := range res.Runs {
			for _, g := range s.Groups {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%.2f\t\n", s.CC, g.Group, g.OK, g.Failed, ms(g.MedianFCTNs), ms(g.P99FCTNs), g.P99Slowdown)
			}
		}
		tw.Flush()
	}
	if len(res.Runs) > 0 && res.Runs[0].RTTMedianNs > 0 {
		fmt.Fprintf(w, "\nRTT noise floor (median ping-pong): %v\n", time.Duration(res.Runs[0].RTTMedianNs))
	}
	printSkipped(w, res.Skipped)
	fmt.Fprintf(w, "FCTs here are flows.csv's (connect to the receiver's last read); `cclab analyze %s` ends them at the last byte's arrival and has the figures\n", res.Dir)
	fmt.Fprintf(w, "run directory: %s\n", res.Dir)
}

// printSkipped lists the compared names skip_missing left out, and why.
func printSkipped(w io.Writer, skips []runner.Skip) {
	for _, s := range skips {
		fmt.Fprintf(w, "skipped %s (skip_missing): %s\n", s.CC, s.Reason)
	}
}
