package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"cclab/orchestrator/envelope"
)

func newEnvelopeCmd() *cobra.Command {
	var loads, fanIns, out, title string
	var runs int
	var seed int64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "envelope EXPERIMENT (--load 20,30,40 | --fan-in 16,32,64)",
		Short: "Find the highest load (or incast degree) this machine carries faithfully: runs at each value, verdicts, figures",
		Long: `Envelope runs the experiment --runs times (seeds --seed, --seed+1, ...) at
each value of its WebSearch-style load (--load: every poisson entry's load,
in percent) or of its incast degree (--fan-in: every incast entry's
fan_in), and keeps every variant's fidelity verdict, saturated windows, CPU
queue p99 and delay-line lateness. The edge is the highest value up to
which every run was faithful. It writes envelope.json, envelope.csv and the
figures envelope-saturated.svg and envelope-cpuqueue.svg under --out, the
runs under --out/runs. 'cclab envelope plot' overlays envelopes (before
and after a change). docs/performance.md, "The faithful-load envelope".`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opt := envelope.Options{File: args[0], Runs: runs, Seed: seed, Out: out, Log: cmd.ErrOrStderr(), Versions: buildVersion()}
			var err error
			switch {
			case loads != "" && fanIns == "":
				opt.Knob = envelope.Load
				opt.Values, err = parseValues(loads, 0.1, 100)
			case fanIns != "" && loads == "":
				opt.Knob = envelope.FanIn
				opt.Values, err = parseValues(fanIns, 1, 65534)
			default:
				return fmt.Errorf("envelope: give --load or --fan-in (one of them)")
			}
			if err != nil {
				return err
			}
			if runs < 1 {
				return fmt.Errorf("envelope: --runs %d: at least 1", runs)
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			env, merr := envelope.Measure(cmd.Context(), opt)
			if env == nil {
				return merr
			}
			if err := env.Write(out); err != nil {
				return err
			}
			if title == "" {
				title = strings.TrimSuffix(filepath.Base(args[0]), filepath.Ext(args[0]))
			}
			figs, err := envelope.Figures(out, title, []envelope.Labeled{{Label: "this build", Env: env}})
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(env); err != nil {
					return err
				}
			} else {
				printEnvelope(cmd.OutOrStdout(), env, out, figs)
			}
			return merr
		},
	}
	cmd.Flags().StringVar(&loads, "load", "", "WebSearch-style loads in percent, ascending (every poisson entry's load)")
	cmd.Flags().StringVar(&fanIns, "fan-in", "", "incast degrees, ascending (every incast entry's fan_in)")
	cmd.Flags().IntVar(&runs, "runs", 3, "runs per value")
	cmd.Flags().Int64Var(&seed, "seed", 1, "seed of the first run at each value (the next runs add 1)")
	cmd.Flags().StringVar(&out, "out", "results/envelope", "directory of the envelope's files, figures and runs")
	cmd.Flags().StringVar(&title, "title", "", "the figures' title (default: the experiment file's name)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the envelope as JSON")
	cmd.AddCommand(newEnvelopePlotCmd())
	return cmd
}

func newEnvelopePlotCmd() *cobra.Command {
	var out, title string
	cmd := &cobra.Command{
		Use:   "plot LABEL=ENVELOPE.json...",
		Short: "Overlay envelopes in one pair of figures (e.g. before=a/envelope.json after=b/envelope.json)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var envs []envelope.Labeled
			for _, a := range args {
				label, path, ok := strings.Cut(a, "=")
				if !ok || label == "" {
					return fmt.Errorf("envelope plot: %q: give LABEL=PATH", a)
				}
				e, err := envelope.Read(path)
				if err != nil {
					return err
				}
				if len(envs) > 0 && e.Knob != envs[0].Env.Knob {
					return fmt.Errorf("envelope plot: %s varies %s, %s varies %s", path, e.Knob, envs[0].Label, envs[0].Env.Knob)
				}
				envs = append(envs, envelope.Labeled{Label: label, Env: e})
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			figs, err := envelope.Figures(out, title, envs)
			if err != nil {
				return err
			}
			for _, le := range envs {
				printEnvelope(cmd.OutOrStdout(), le.Env, le.Label, nil)
			}
			fmt.Fprintln(cmd.OutOrStdout(), strings.Join(figs, "\n"))
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", ".", "directory of the figures")
	cmd.Flags().StringVar(&title, "title", "envelope", "the figures' title")
	return cmd
}

// parseValues reads an ascending comma list within [lo, hi].
func parseValues(s string, lo, hi float64) ([]float64, error) {
	var vs []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(f, "%")), 64)
		if err != nil || v < lo || v > hi {
			return nil, fmt.Errorf("envelope: value %q: a number in [%g, %g]", f, lo, hi)
		}
		vs = append(vs, v)
	}
	if !slices.IsSorted(vs) || len(slices.Compact(slices.Clone(vs))) != len(vs) {
		return nil, fmt.Errorf("envelope: values %s: give them ascending, each once", s)
	}
	return vs, nil
}

// printEnvelope is the one-screen summary: a row per value, the edge.
func printEnvelope(w io.Writer, e *envelope.Envelope, where string, figs []string) {
	tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tfaithful runs\tsaturated max %%\tCPU queue p99 max ms\tbound ms\tline late p99 max us\tpacket softirq %%\t\n", e.Knob)
	for _, s := range e.Sums {
		fmt.Fprintf(tw, "%s\t%d of %d\t%.1f\t%.2f\t%.2f\t%.0f\t%.0f\t\n", e.Knob.Format(s.Value), s.Faithful, s.Runs,
			100*s.Saturated, s.CPUQueueP99/1000, s.CPUQueueBound/1000, s.LateP99, 100*s.Softirq)
	}
	tw.Flush()
	if e.HasEdge {
		fmt.Fprintf(w, "%s: faithful in every run up to %s %s\n", where, e.Knob, e.Knob.Format(e.Edge))
	} else {
		fmt.Fprintf(w, "%s: not faithful in every run even at the lowest value\n", where)
	}
	for _, f := range figs {
		fmt.Fprintln(w, f)
	}
}
