package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"cclab/analysis/report"
)

func newCompareCmd() *cobra.Command {
	var asJSON, fresh, force, partial bool
	cmd := &cobra.Command{
		Use:   "compare RUN_A RUN_B",
		Short: "Two runs side by side: each law's FCT slowdowns in both, with the differences",
		Long: "Compares two run (or experiment) directories: for every law in either, the\n" +
			"headline FCT slowdowns of A and B, B - A and B / A - 1, and each side's\n" +
			"emulation verdict. It reads each run's analysis (RUN/analysis/summary.json)\n" +
			"when there is one, else analyses the run first (--fresh always does).\n\n" +
			"The runs must share topology and workload (the flow list each run.json\n" +
			"records, the compared law left out) to be compared: what differs is\n" +
			"printed, and runs that differ (or a side without run.json) are compared\n" +
			"only with --force, and then labelled so (terminal and --json). The same\n" +
			"experiment and seed under another law is the normal case. A run a signal\n" +
			"interrupted is refused unless --partial is given, and then flagged.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			check, err := checkRuns(args[0], args[1])
			if err != nil {
				return err
			}
			if !check.Comparable {
				if !force {
					return check.refusal()
				}
				check.Forced = true
			}
			var as [2]*report.Analysis
			for i, dir := range args {
				a, err := loadOrAnalyze(cmd, dir, fresh, partial)
				if err != nil {
					return fmt.Errorf("run %s: %w", dir, err)
				}
				as[i] = a
			}
			d := report.CompareTwo(args[0], as[0], args[1], as[1])
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(checkedDelta{Delta: d, Check: check})
			}
			check.print(cmd.OutOrStdout())
			for _, l := range d.Partial {
				fmt.Fprintln(cmd.OutOrStdout(), l)
			}
			return printDelta(cmd.OutOrStdout(), d.Table())
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the comparison as JSON")
	cmd.Flags().BoolVar(&force, "force", false, "compare runs of different topologies or workloads (labelled so)")
	cmd.Flags().BoolVar(&fresh, "fresh", false, "analyse both runs again, even when they have an analysis")
	cmd.Flags().BoolVar(&partial, "partial", false, "compare runs that a signal interrupted (flagged in the output)")
	return cmd
}

// checkedDelta is the --json output: the comparison with what the runs
// share or not ("check").
type checkedDelta struct {
	*report.Delta
	Check *runCheck `json:"check"`
}

func loadOrAnalyze(cmd *cobra.Command, dir string, fresh, partial bool) (*report.Analysis, error) {
	if !fresh {
		a, err := report.LoadSummary(dir)
		if err == nil && len(a.Interrupted) > 0 && !partial {
			in := a.Interrupted[0]
			return nil, fmt.Errorf("%s: %s at %s: %w", in.Variant, in.Cause, in.At, report.ErrInterrupted)
		}
		if err == nil {
			return a, nil
		}
		if errors.Is(err, report.ErrStaleSummary) {
			fmt.Fprintf(cmd.ErrOrStderr(), "%v: analysing again\n", err)
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "analysing %s...\n", dir)
	return report.Analyze(cmd.Context(), dir, report.Config{Partial: partial})
}

func printDelta(w io.Writer, t report.Table) error {
	fmt.Fprintln(w, t.Title)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, joinTab(t.Header))
	prev := ""
	for _, r := range t.Rows {
		if r[0] == prev {
			r = append([]string{""}, r[1:]...)
		} else {
			prev = r[0]
		}
		fmt.Fprintln(tw, joinTab(r))
	}
	return tw.Flush()
}

func joinTab(cells []string) string {
	s := ""
	for i, c := range cells {
		if i > 0 {
			s += "\t"
		}
		s += c
	}
	return s
}
