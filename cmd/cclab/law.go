package main

import (
	"encoding/json"
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

// lawParams builds checked parameters from the law name and name=value
// args, typed as an experiment's settings are and checked the same way.
func lawParams(name string, assignments []string) (*law.Params, error) {
	l, err := law.ParseLaw(name)
	if err != nil {
		return nil, err
	}
	ss, err := law.ParseAssignments(assignments)
	if err != nil {
		return nil, err
	}
	if err := ss.Check([]law.Law{l}); err != nil {
		return nil, err
	}
	return ss.Params(l)
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
	var asJSON, markdown bool
	cmd := &cobra.Command{
		Use:   "params --law NAME [name=value...]",
		Short: "Print a law's parameters (defaults, or with the given changes) and check them",
		Long: "Prints each parameter of a law with its value, unit, default, range and meaning,\n" +
			"from the law table (kmod/law/law_table.h), after applying and checking the\n" +
			"given name=value changes. --markdown prints the tables of kmod/law/README.md\n" +
			"(every law when --law is not given).\n" +
			"Laws: " + strings.Join(law.Laws(), ", "),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if markdown {
				names := law.Laws()
				if lawName != "" {
					names = []string{lawName}
				}
				for i, n := range names {
					l, err := law.ParseLaw(n)
					if err != nil {
						return err
					}
					md, err := law.MarkdownParams(l)
					if err != nil {
						return err
					}
					if len(names) > 1 {
						if i > 0 {
							fmt.Fprintln(out)
						}
						fmt.Fprintf(out, "%s\n\n", l)
					}
					fmt.Fprint(out, md)
				}
				return nil
			}
			if lawName == "" {
				return fmt.Errorf("--law is required (one of %s)", strings.Join(law.Laws(), ", "))
			}
			p, err := lawParams(lawName, args)
			if err != nil {
				return err
			}
			values := p.List()
			if asJSON {
				type row struct {
					law.ParamInfo
					Value uint64 `json:"value"`
				}
				rows := make([]row, 0, len(values))
				for i, q := range p.Info() {
					rows = append(rows, row{q, values[i].Value})
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"law": p.Law().String(), "params": rows})
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "parameter\tvalue\tunit\tdefault\trange\tmeaning")
			for i, q := range p.Info() {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%s\t%s\n", q.Name, values[i].Value, q.Unit, q.Default, law.RangeText(q), q.Desc)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&lawName, "law", "", "law: "+strings.Join(law.Laws(), ", "))
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (each parameter's value and table row)")
	cmd.Flags().BoolVar(&markdown, "markdown", false, "print the parameter tables of kmod/law/README.md")
	return cmd
}
