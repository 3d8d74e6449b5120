package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"cclab/kmod/law"
)

// newLawCmd groups the offline tools of the control-law core.
func newLawCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "law",
		Short: "Run the control-law core offline (replay traces, list parameters)",
	}
	cmd.AddCommand(newLawReplayCmd(), newLawParamsCmd())
	return cmd
}

// lawParams builds checked parameters from the law name and name=value args.
func lawParams(name string, assignments []string) (*law.Params, error) {
	l, err := law.ParseLaw(name)
	if err != nil {
		return nil, err
	}
	p, err := law.DefaultParams(l)
	if err != nil {
		return nil, err
	}
	for _, kv := range assignments {
		if err := p.SetAssignment(kv); err != nil {
			return nil, err
		}
	}
	if err := p.Check(); err != nil {
		return nil, err
	}
	return p, nil
}

func newLawReplayCmd() *cobra.Command {
	var lawName string
	var asJSON bool
	var mss uint32
	cmd := &cobra.Command{
		Use:   "replay --law NAME [name=value...] TRACE.csv",
		Short: "Run a law over a CSV trace of ACKs and print its cwnd and pacing sequence",
		Long: "Runs the law core (the same C the BPF and module builds use) over a trace of\n" +
			"ACK events (time, acked bytes, RTT, ECN, INT hop records) and prints one row per\n" +
			"ACK: window, pacing rate, the law's signal and its trace flags. The trace format\n" +
			"and the parameters are documented in kmod/law/README.md.\n" +
			"Laws: " + strings.Join(law.Laws(), ", "),
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var trace string
			var assignments []string
			for _, a := range args {
				if strings.Contains(a, "=") {
					assignments = append(assignments, a)
				} else if trace == "" {
					trace = a
				} else {
					return fmt.Errorf("two trace files given: %s and %s", trace, a)
				}
			}
			if trace == "" {
				return fmt.Errorf("no trace file given")
			}
			p, err := lawParams(lawName, assignments)
			if err != nil {
				return err
			}
			f, err := os.Open(trace)
			if err != nil {
				return fmt.Errorf("open trace: %w", err)
			}
			defer f.Close()
			events, err := law.ReadTrace(f)
			if err != nil {
				return fmt.Errorf("%s: %w", trace, err)
			}
			res, err := law.Replay(cmd.Context(), p, events, mss)
			if err != nil {
				return err
			}
			if asJSON {
				return res.WriteJSON(cmd.OutOrStdout())
			}
			return res.WriteCSV(cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&lawName, "law", "", "law to run: "+strings.Join(law.Laws(), ", "))
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (law, parameters, steps) instead of CSV")
	cmd.Flags().Uint32Var(&mss, "mss", law.DefaultMSS, "segment size for rows without an mss column")
	_ = cmd.MarkFlagRequired("law")
	return cmd
}

func newLawParamsCmd() *cobra.Command {
	var lawName string
	cmd := &cobra.Command{
		Use:   "params --law NAME [name=value...]",
		Short: "Print a law's parameters (defaults, or with the given changes) and check them",
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := lawParams(lawName, args)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			for _, q := range p.List() {
				fmt.Fprintf(tw, "%s\t%d\n", q.Name, q.Value)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&lawName, "law", "", "law: "+strings.Join(law.Laws(), ", "))
	_ = cmd.MarkFlagRequired("law")
	return cmd
}
