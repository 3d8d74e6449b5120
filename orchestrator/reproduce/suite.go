package reproduce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"cclab/analysis/report"
	"cclab/internal/runid"
	"cclab/orchestrator/runner"
)

// Options configure Run.
type Options struct {
	Root     string // the repository (experiments/reproduce/ is under it)
	Out      string // parent of the run directories (default results/reproduce)
	Log      io.Writer
	Versions map[string]string
	// Extensions are the runner's run extensions (switch, host agent,
	// law parameters), as `cclab run` uses them.
	Extensions func() []runner.Extension
	// Ensure registers a law under its name with exactly its settings
	// (reloading it when it is registered with others), before each
	// experiment, and reports whether it registered it. Nil: laws must be
	// loaded beforehand (`cclab cc load`) with the settings the
	// experiment names; those that are not loaded are reported as
	// missing, and the parameters in force are the ones loaded.
	Ensure func(ctx context.Context, n Need) (registered bool, err error)
	// Unregister removes, when the suite ends, the registrations Ensure
	// made, so that they do not outlive it with the suite's parameters
	// (a later run's `laws:` section would refuse them).
	Unregister func(names []string) error

	registered map[string]bool // names Ensure registered during Run
}

// Verdicts of a claim.
const (
	Agrees        = "agrees"
	Disagrees     = "disagrees"
	CouldNotRun   = "could not run"
	NotMeasurable = "not measurable"
)

// Health is what run.json says about the emulation of one variant.
type Health struct {
	Kernel        string  `json:"kernel"`
	CPUSaturated  float64 `json:"cpu_saturated_share"`
	CPUMaxBusy    float64 `json:"cpu_max_busy"`
	RTTMedianNs   int64   `json:"rtt_median_ns"`
	RTTP99Ns      int64   `json:"rtt_p99_ns"`
	LoadedLinks   int     `json:"loaded_links"`
	MinPeakRatio  float64 `json:"min_peak_ratio"` // lowest achieved/configured among loaded links
	CaptureDrops  uint64  `json:"capture_drops"`
	Flows         int     `json:"flows"`
	FlowsFailed   int     `json:"flows_failed"`
	SwitchActive  bool    `json:"switch_active"`
	DurationNs    int64   `json:"duration_ns"`
	RunErrorsSeen int     `json:"run_errors"`
}

// VariantOutcome is one compared congestion control of an experiment.
type VariantOutcome struct {
	CC      string   `json:"cc"`
	Status  string   `json:"status"` // ran, not loaded, failed
	Reason  string   `json:"reason,omitempty"`
	Dir     string   `json:"dir,omitempty"`
	Metrics Metrics  `json:"metrics,omitempty"`
	Health  *Health  `json:"health,omitempty"`
	Figures []string `json:"figures,omitempty"` // under docs/, set by Publish
}

// ClaimOutcome is a claim's verdict.
type ClaimOutcome struct {
	ID       string `json:"id"`
	Paper    string `json:"paper"`
	Measured string `json:"measured,omitempty"`
	Verdict  string `json:"verdict"`
	Reason   string `json:"reason,omitempty"`
	Note     string `json:"note,omitempty"`
}

// Outcome is one experiment's result.
type Outcome struct {
	Name     string           `json:"name"`
	Title    string           `json:"title"`
	Paper    string           `json:"paper"`
	File     string           `json:"file"`
	RunID    string           `json:"run_id,omitempty"`
	Dir      string           `json:"dir,omitempty"`
	Started  string           `json:"started"`
	Seconds  float64          `json:"seconds"`
	Switch   bool             `json:"switch_requested"`
	Needs    []Need           `json:"needs"`
	Metrics  []Metric         `json:"metrics"`
	Variants []VariantOutcome `json:"variants"`
	Claims   []ClaimOutcome   `json:"claims"`
	Error    string           `json:"error,omitempty"`
	// Versions is the build that ran it (revision, modified) and the
	// kernel's release.
	Versions map[string]string `json:"versions,omitempty"`
}

// Run runs, analyses and judges each experiment in turn. An experiment
// that cannot run is an Outcome with its reason, not an error; the error
// is for cancellation.
func Run(ctx context.Context, exps []*Experiment, opt Options) ([]*Outcome, error) {
	if opt.Out == "" {
		opt.Out = filepath.Join("results", "reproduce")
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	var out []*Outcome
	registered := map[string]bool{}
	opt.registered = registered
	defer func() {
		if opt.Unregister == nil || len(registered) == 0 {
			return
		}
		var names []string
		for n := range registered {
			names = append(names, n)
		}
		slices.Sort(names)
		if err := opt.Unregister(names); err != nil {
			fmt.Fprintf(opt.Log, "unregistering %v: %v\n", names, err)
		} else {
			fmt.Fprintf(opt.Log, "unregistered %v (registered by the suite)\n", names)
		}
	}()
	begin := time.Now()
	for i, e := range exps {
		fmt.Fprintf(opt.Log, "== [%d/%d] %s: %s (%s)\n", i+1, len(exps), e.Name, e.Title, e.Paper)
		o := runOne(ctx, e, opt)
		out = append(out, o)
		if err := ctx.Err(); err != nil {
			return out, err
		}
		left := ""
		if n := len(exps) - i - 1; n > 0 {
			// the mean so far: experiments differ, so a rough figure
			per := time.Since(begin) / time.Duration(i+1)
			left = fmt.Sprintf("; about %s for the %d left", (per * time.Duration(n)).Round(time.Second), n)
		}
		fmt.Fprintf(opt.Log, "== %s done in %.0f s%s\n", e.Name, o.Seconds, left)
	}
	return out, nil
}

func runOne(ctx context.Context, e *Experiment, opt Options) *Outcome {
	begin := time.Now()
	o := &Outcome{Name: e.Name, Title: e.Title, Paper: e.Paper, File: filepath.Join("experiments", "reproduce", e.File),
		Started: begin.UTC().Format(time.RFC3339), Needs: e.Needs, Metrics: e.Metrics, Versions: opt.Versions}
	defer func() { o.Seconds = time.Since(begin).Seconds() }()
	fail := func(err error) *Outcome {
		o.Error = err.Error()
		judge(e, o)
		return o
	}
	avail, err := runner.AvailableCCs()
	if err != nil {
		return fail(err)
	}
	loadErr := map[string]string{}
	for _, n := range e.Needs {
		if n.Law == "" || opt.Ensure == nil {
			continue
		}
		fmt.Fprintf(opt.Log, "ensuring %s\n", n.LoadCommand())
		reg, err := opt.Ensure(ctx, n)
		if reg {
			opt.registered[n.Name] = true
		}
		if err != nil {
			fmt.Fprintf(opt.Log, "could not load %s: %v\n", n.Name, err)
			loadErr[n.Name] = err.Error()
			avail[n.Name] = false
			continue
		}
		avail[n.Name] = true
	}
	for _, n := range e.Needs {
		if !avail[n.Name] {
			why := "not loaded in this kernel"
			if e := loadErr[n.Name]; e != "" {
				why = "loading failed: " + e
			}
			if n.Law != "" {
				why += "; needs `" + n.LoadCommand() + "`"
				if n.Name != n.Law {
					why += " (a second registration of " + n.Law + " under its own name: the Go API of `cclab cc load`, internal/cc Options.Names)"
				}
			}
			o.Variants = append(o.Variants, VariantOutcome{CC: n.Name, Status: "not loaded", Reason: why})
		}
	}
	p, err := runner.Prepare(filepath.Join(opt.Root, o.File))
	if err != nil {
		return fail(err)
	}
	o.Switch = p.Exp.Switch != nil
	id := runid.New()
	o.RunID = string(id)
	res, runErr := runner.Run(ctx, p, runner.Options{Out: opt.Out, ID: id, Log: opt.Log, Versions: opt.Versions, Extensions: opt.Extensions})
	if res != nil {
		o.Dir = res.Dir
	}
	rate := receiverRate(p)
	for _, v := range p.Variants {
		if loadErr[v.CC] != "" {
			continue // ran with a registration this suite could not set up: not its experiment
		}
		dir := o.Dir
		if len(p.Exp.Compare) > 0 {
			dir = filepath.Join(o.Dir, v.CC)
		}
		o.Variants = append(o.Variants, measure(ctx, e, v.CC, dir, rate, o.Switch, opt.Log))
	}
	slices.SortStableFunc(o.Variants, func(a, b VariantOutcome) int { return needIndex(e, a.CC) - needIndex(e, b.CC) })
	if runErr != nil {
		o.Error = runErr.Error()
	}
	judge(e, o)
	return o
}

func needIndex(e *Experiment, cc string) int {
	return slices.IndexFunc(e.Needs, func(n Need) bool { return n.Name == cc })
}

// receiverRate is the link rate of the incast receiver h0 (the stars'
// bottleneck), 0 when the topology has no h0.
func receiverRate(p *runner.Prepared) float64 {
	if _, l, ok := p.Plan.HostPort("h0"); ok {
		return float64(l.Rate.BitsPerSecond())
	}
	return 0
}

// measure analyses one variant's run directory and extracts its metrics.
func measure(ctx context.Context, e *Experiment, cc, dir string, rate float64, sw bool, log io.Writer) VariantOutcome {
	vo := VariantOutcome{CC: cc, Dir: dir, Status: "ran"}
	h, err := readHealth(dir)
	if err != nil {
		vo.Status, vo.Reason = "failed", err.Error()
		return vo
	}
	if sw && !h.SwitchActive {
		vo.Reason = "the experiment asks for the INT switch (switch:) but this run wrote no queues.csv: the switch is not active in `cclab run` on this build"
	}
	vo.Health = h
	fmt.Fprintf(log, "[%s] analysing %s\n", cc, dir)
	a, err := report.AnalyzeRun(ctx, dir, report.Config{Window: time.Millisecond})
	if err != nil {
		vo.Status, vo.Reason = "failed", "analysis: "+err.Error()
		return vo
	}
	if _, err := report.Write(a, filepath.Join(dir, "analysis")); err != nil {
		vo.Status, vo.Reason = "failed", "analysis: "+err.Error()
		return vo
	}
	vo.Metrics = e.Measure(view{a: a, rateBps: rate})
	return vo
}

// readHealth reads the emulation health from run.json.
func readHealth(dir string) (*Health, error) {
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return nil, fmt.Errorf("run.json: %w", err)
	}
	var rj runner.RunJSON
	if err := json.Unmarshal(b, &rj); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "run.json"), err)
	}
	h := &Health{Kernel: rj.Kernel.Release, CPUSaturated: rj.Health.CPU.SaturatedShare, CPUMaxBusy: rj.Health.CPU.MaxBusy,
		LoadedLinks: len(rj.Health.Links), CaptureDrops: rj.CaptureDrops, Flows: rj.Flows.Total, FlowsFailed: rj.Flows.Failed,
		RunErrorsSeen: len(rj.Errors)}
	if rj.Health.RTT != nil {
		h.RTTMedianNs, h.RTTP99Ns = rj.Health.RTT.MedianNs, rj.Health.RTT.P99Ns
	}
	for i, l := range rj.Health.Links {
		if i == 0 || l.Ratio < h.MinPeakRatio {
			h.MinPeakRatio = l.Ratio
		}
	}
	if t0, err := time.Parse(time.RFC3339Nano, rj.Started); err == nil {
		if t1, err := time.Parse(time.RFC3339Nano, rj.Finished); err == nil {
			h.DurationNs = int64(t1.Sub(t0))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "queues.csv")); err == nil {
		h.SwitchActive = true
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return h, nil
}

// judge evaluates every claim of the experiment on the variants that ran.
func judge(e *Experiment, o *Outcome) {
	byCC := map[string]*VariantOutcome{}
	for i := range o.Variants {
		byCC[o.Variants[i].CC] = &o.Variants[i]
	}
	o.Claims = nil
	for _, c := range e.Claims {
		co := ClaimOutcome{ID: c.ID, Paper: c.Paper, Note: c.Note}
		m := map[string]Metrics{}
		for _, cc := range c.Needs {
			v := byCC[cc]
			switch {
			case v == nil && o.Error != "":
				co.Verdict, co.Reason = CouldNotRun, "the experiment did not run: "+o.Error
			case v == nil:
				co.Verdict, co.Reason = CouldNotRun, cc+" did not run"
			case v.Status != "ran":
				co.Verdict, co.Reason = CouldNotRun, cc+": "+v.Status+": "+v.Reason
			case v.Reason != "" && needsSwitch(e, cc):
				co.Verdict, co.Reason = CouldNotRun, cc+": "+v.Reason
			}
			if co.Verdict != "" {
				break
			}
			m[cc] = v.Metrics
		}
		if co.Verdict == "" {
			measured, agrees, ok := c.Check(m)
			co.Measured = measured
			switch {
			case !ok:
				co.Verdict, co.Reason = NotMeasurable, "a number the claim reads is missing from the run"
				for _, cc := range c.Needs {
					if r := byCC[cc].Reason; r != "" {
						co.Reason += " (" + cc + ": " + r + ")"
					}
				}
			case agrees:
				co.Verdict = Agrees
			default:
				co.Verdict = Disagrees
			}
		}
		o.Claims = append(o.Claims, co)
	}
}

// needsSwitch: the telemetry laws cannot work without INT records, DCTCP
// without ECN marks from the switch.
func needsSwitch(e *Experiment, cc string) bool {
	i := needIndex(e, cc)
	if i < 0 {
		return false
	}
	switch e.Needs[i].Law {
	case "hpcc", "powertcp", "dctcp":
		return true
	}
	return false
}
