package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"cclab/analysis/metrics"
	"cclab/analysis/report"
	"cclab/internal/units"
	"cclab/rundir"
	"cclab/topology"
	"cclab/topology/ideal"
)

type analyzeFlags struct {
	pcaps    []string
	compare  bool
	out      string
	rate     string
	baseRTT  string
	topology string
	window   string
	hold     string
	baseline string
	fair     float64
	overlap  int
	short    string
	long     string
	jsonOut  bool
	quiet    bool
	partial  bool
}

func newAnalyzeCmd() *cobra.Command {
	var f analyzeFlags
	cmd := &cobra.Command{
		Use:   "analyze RUN_DIR | --pcap FILE... | --compare RUN_DIR...",
		Args:  cobra.ArbitraryArgs,
		Short: "Turn a run (or captures) into FCT slowdown, fairness and queue tables, plots and a report",
		Long: `analyze reads a run directory (docs/run-directory.md) and writes, under
RUN_DIR/analysis (or --out): summary.json, CSV tables, figures/*.png|svg,
report.md and a self-contained report.html. Given the directory of an
experiment (one run directory per congestion control, as cclab run writes
them), it analyses every variant and puts them side by side.

With --pcap it analyses captures from anywhere; give the slowest link rate
and base RTT (--rate, --base-rtt) or a topology (--topology: a run.json or
a topology plan JSON) so slowdowns can be computed.

With --compare it analyses several runs (e.g. of different random seeds)
and prints the papers' style of table: p99.9 short-flow slowdown per law and each law's ratio to
--baseline.

A run that a signal interrupted (run.json "interrupted") is refused unless
--partial is given; then the summary and the pages open by saying so. A
capture cut short (an interrupted write, a full disk, a damaged record) is
analysed up to the damage, and the summary names the file, the byte
offset and the packets read.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAnalyze(cmd, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.pcaps, "pcap", nil, "capture file to analyse instead of a run (repeatable)")
	fl.BoolVar(&f.compare, "compare", false, "compare the runs given as arguments")
	fl.StringVar(&f.out, "out", "", "output directory (default RUN_DIR/analysis, or ./analysis for --pcap/--compare)")
	fl.StringVar(&f.rate, "rate", "", "slowest link rate on the flows' path, for --pcap (e.g. 10Gbit)")
	fl.StringVar(&f.baseRTT, "base-rtt", "0", "base RTT, for --pcap (e.g. 20us)")
	fl.StringVar(&f.topology, "topology", "", "run.json or topology plan JSON giving link rates and delays per path")
	fl.StringVar(&f.window, "window", "1ms", "window for throughput and fairness")
	fl.StringVar(&f.hold, "hold", "", "how long the Jain index must stay >= --fair to count as fair (default 10 windows)")
	fl.Float64Var(&f.fair, "fair", 0.95, "Jain index counted as fair")
	fl.IntVar(&f.overlap, "fair-overlap", 10, "fairness only among flows that share a bottleneck this many base RTTs")
	fl.StringVar(&f.short, "short-below", "10KB", "flows smaller than this are short (PowerTCP: 10KB)")
	fl.StringVar(&f.long, "long-from", "1MB", "flows of this size and more are long")
	fl.StringVar(&f.baseline, "baseline", "", "law the others are compared to (default: first by name)")
	fl.BoolVar(&f.jsonOut, "json", false, "print the summary as JSON")
	fl.BoolVar(&f.quiet, "quiet", false, "no progress messages")
	fl.BoolVar(&f.partial, "partial", false, "analyse a run that a signal interrupted (its numbers are flagged as no result)")
	return cmd
}

func analyzeConfig(f analyzeFlags, stderr io.Writer) (report.Config, error) {
	var cfg report.Config
	w, err := units.ParseDuration(f.window)
	if err != nil || w <= 0 {
		return cfg, fmt.Errorf("--window: must be a positive duration: %q", f.window)
	}
	cfg.Window = w.D()
	if f.hold != "" {
		h, err := units.ParseDuration(f.hold)
		if err != nil {
			return cfg, fmt.Errorf("--hold: %w", err)
		}
		cfg.FairHold = h.D()
	}
	if f.fair <= 0 || f.fair > 1 {
		return cfg, fmt.Errorf("--fair %v: must be in (0, 1]", f.fair)
	}
	cfg.FairThreshold = f.fair
	cfg.Partial = f.partial
	if f.overlap < 1 {
		return cfg, fmt.Errorf("--fair-overlap %d: must be at least 1 base RTT", f.overlap)
	}
	cfg.FairOverlapRTTs = f.overlap
	short, err := units.ParseSize(f.short)
	if err != nil {
		return cfg, fmt.Errorf("--short-below: %w", err)
	}
	long, err := units.ParseSize(f.long)
	if err != nil {
		return cfg, fmt.Errorf("--long-from: %w", err)
	}
	cfg.Classes = metrics.Classes{ShortBelow: uint64(short), LongAtLeast: uint64(long)}
	if f.rate != "" {
		r, err := units.ParseRate(f.rate)
		if err != nil {
			return cfg, fmt.Errorf("--rate: %w", err)
		}
		cfg.BottleneckBps = r.BitsPerSecond()
	}
	rtt, err := units.ParseDuration(f.baseRTT)
	if err != nil {
		return cfg, fmt.Errorf("--base-rtt: %w", err)
	}
	cfg.BaseRTT = rtt.D()
	if f.topology != "" {
		p, fr, err := readPlan(f.topology)
		if err != nil {
			return cfg, err
		}
		cfg.Plan, cfg.Framing = p, fr
	}
	if !f.quiet {
		last := time.Time{}
		cfg.Progress = func(msg string) {
			// Rate-limit the per-packet-count messages; always show steps.
			if strings.HasPrefix(msg, "  ") && time.Since(last) < time.Second {
				return
			}
			last = time.Now()
			fmt.Fprintln(stderr, "analyze:", strings.TrimSpace(msg))
		}
	}
	return cfg, nil
}

// readPlan reads a topology plan from a plan JSON or a run.json (with the
// run's framing, when it has one).
func readPlan(path string) (*topology.Plan, ideal.Framing, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, ideal.Framing{}, fmt.Errorf("--topology: %w", err)
	}
	var run rundir.Info
	if err := json.Unmarshal(b, &run); err == nil && run.Topology != nil && len(run.Topology.Links) > 0 {
		return run.Topology, run.Framing.Ideal(), nil
	}
	var p topology.Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, ideal.Framing{}, fmt.Errorf("--topology %s: not a run.json or plan JSON: %w", path, err)
	}
	if len(p.Links) == 0 {
		return nil, ideal.Framing{}, fmt.Errorf("--topology %s: no links", path)
	}
	return &p, ideal.Framing{}, nil
}

func runAnalyze(cmd *cobra.Command, f analyzeFlags, args []string) error {
	ctx := cmd.Context()
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	cfg, err := analyzeConfig(f, stderr)
	if err != nil {
		return err
	}
	switch {
	case f.compare:
		return runCompare(cmd, f, cfg, args)
	case len(f.pcaps) > 0:
		if len(args) > 0 {
			return fmt.Errorf("give either a run directory or --pcap files, not both")
		}
		if cfg.BottleneckBps == 0 && cfg.Plan == nil {
			fmt.Fprintln(stderr, "analyze: no --rate or --topology: FCTs are reported, slowdowns are not")
		}
		a, err := report.AnalyzePcaps(ctx, f.pcaps, cfg)
		if err != nil {
			return err
		}
		return finish(a, f, "analysis", stdout, stderr)
	case len(args) == 1:
		a, err := report.Analyze(ctx, args[0], cfg)
		if err != nil {
			return err
		}
		return finish(a, f, filepath.Join(args[0], "analysis"), stdout, stderr)
	default:
		return fmt.Errorf("give one run directory, --pcap FILE, or --compare RUN_DIR...")
	}
}

func finish(a *report.Analysis, f analyzeFlags, defOut string, stdout, stderr io.Writer) error {
	out := f.out
	if out == "" {
		out = defOut
	}
	if !f.quiet {
		fmt.Fprintln(stderr, "analyze: writing tables, figures and report to", out)
	}
	o, err := report.Write(a, out)
	if err != nil {
		return err
	}
	if f.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			*report.Analysis
			Outputs *report.Outputs `json:"outputs"`
		}{a, o})
	}
	for _, l := range a.SummaryLines() {
		fmt.Fprintln(stdout, l)
	}
	fmt.Fprintf(stdout, "wrote %d files to %s (open %s)\n", len(o.Files), out, filepath.Join(out, "report.html"))
	return nil
}

func runCompare(cmd *cobra.Command, f analyzeFlags, cfg report.Config, runs []string) error {
	if len(runs) == 0 {
		return fmt.Errorf("--compare needs run directories")
	}
	var as []*report.Analysis
	for _, r := range runs {
		a, err := report.Analyze(cmd.Context(), r, cfg)
		if err != nil {
			return fmt.Errorf("run %s: %w", r, err)
		}
		as = append(as, a)
	}
	c, err := report.Compare(runs, as, f.baseline)
	if err != nil {
		return err
	}
	out := f.out
	if out == "" {
		out = "analysis"
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	md := c.Markdown()
	if err := os.WriteFile(filepath.Join(out, "compare.md"), md, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "compare.html"), c.HTML(), 0o644); err != nil {
		return err
	}
	js, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "compare.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	for i, t := range c.Tables() {
		b, err := t.CSV()
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, fmt.Sprintf("compare_%d.csv", i+1)), b, 0o644); err != nil {
			return err
		}
	}
	if f.jsonOut {
		_, err := cmd.OutOrStdout().Write(append(js, '\n'))
		return err
	}
	_, err = cmd.OutOrStdout().Write(md)
	return err
}
