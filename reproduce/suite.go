package reproduce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"cclab/analysis/report"
	"cclab/internal/runid"
	"cclab/kmod/law"
	"cclab/orchestrator/runner"
	"cclab/rundir"
)

// Options configure Run.
type Options struct {
	Root     string // the repository (experiments/reproduce/ is under it)
	Out      string // parent of the run directories (default results/reproduce)
	Log      io.Writer
	Versions map[string]string
	// Extensions are the runner's run extensions, as `cclab run` uses
	// them.
	Extensions func() []runner.Extension
	// Retries is how many times a seed's variants judged degraded are run
	// again (0: never).
	Retries int
	// LockPath is the host lock (default hostlock.DefaultPath); Wait
	// waits for it rather than failing when another run holds it.
	LockPath string
	Wait     bool
}

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

// VariantOutcome is one compared congestion control of one run.
type VariantOutcome struct {
	CC     string `json:"cc"`
	Status string `json:"status"` // ran, not loaded, failed
	Reason string `json:"reason,omitempty"`
	Dir    string `json:"dir,omitempty"`
	// Fidelity is the run's verdict on the emulation of this variant:
	// "faithful" or "degraded: " and the broken invariants.
	Fidelity string `json:"fidelity,omitempty"`
	// Earlier are the verdicts of earlier runs of this variant and seed
	// that were judged degraded and run again ("<run id>: degraded: ...").
	Earlier []string `json:"earlier,omitempty"`
	Metrics Metrics  `json:"metrics,omitempty"`
	// Samples are the per-flow numbers pooled percentiles are taken over.
	Samples Samples  `json:"samples,omitempty"`
	Health  *Health  `json:"health,omitempty"`
	Figures []string `json:"figures,omitempty"` // under docs/, set by Publish
}

// RunOutcome is one run of an experiment: one seed, every variant.
type RunOutcome struct {
	Seed     int64            `json:"seed"`
	RunID    string           `json:"run_id,omitempty"`
	Dir      string           `json:"dir,omitempty"`
	Error    string           `json:"error,omitempty"`
	Variants []VariantOutcome `json:"variants"`
}

func (r *RunOutcome) variant(cc string) *VariantOutcome {
	for i := range r.Variants {
		if r.Variants[i].CC == cc {
			return &r.Variants[i]
		}
	}
	return nil
}

// Outcome is one experiment's result.
type Outcome struct {
	Name    string   `json:"name"`
	Title   string   `json:"title"`
	Paper   string   `json:"paper"`
	File    string   `json:"file"`
	Started string   `json:"started"`
	Seconds float64  `json:"seconds"`
	Switch  bool     `json:"switch_requested"`
	Compare []string `json:"compare"`
	Metrics []Metric `json:"metrics"`
	Order   int      `json:"order"`
	Figures []string `json:"figures,omitempty"`
	// PaperFigure is the claims-against-the-paper figure under docs/, set
	// by Publish.
	PaperFigure string         `json:"paper_figure,omitempty"`
	Runs        []RunOutcome   `json:"runs"`
	Claims      []ClaimOutcome `json:"claims"`
	// PostHoc are the setup choices made after a result was seen.
	PostHoc []PostHoc `json:"posthoc,omitempty"`
	Error   string    `json:"error,omitempty"`
	// Versions is the build that ran it (revision, modified) and the
	// kernel's release.
	Versions map[string]string `json:"versions,omitempty"`
}

// Run is the suite's local executor: it plans the experiments (each
// file's seeds) into a sweep under opt.Out, runs its tasks here one after
// another (each under the host lock, its degraded variants run again per
// opt.Retries, each leaving its marker, so that `cclab sweep gather` reads
// the same plan), and judges each experiment as the gather does. An
// experiment that cannot run is an Outcome with its reason, not an error;
// the error is for cancellation.
func Run(ctx context.Context, exps []*Experiment, opt Options) ([]*Outcome, error) {
	if opt.Out == "" {
		opt.Out = filepath.Join("results", "reproduce")
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	plan, id, err := localPlan(exps, opt)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(opt.Log, "== plan %s: %d tasks\n", filepath.Join(plan.Out, PlanFile), len(plan.Tasks))
	var out []*Outcome
	begin := time.Now()
	for i, e := range exps {
		fmt.Fprintf(opt.Log, "== [%d/%d] %s: %s (%s), seeds %v\n", i+1, len(exps), e.Name, e.Title, e.Paper, e.Seeds)
		o := runExperiment(ctx, plan, id, e, opt)
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

// localPlan plans the experiments as loaded (their seeds) into a new
// directory under opt.Out.
func localPlan(exps []*Experiment, opt Options) (*Plan, string, error) {
	out, err := filepath.Abs(filepath.Join(opt.Out, "plan-"+time.Now().UTC().Format("20060102-150405")+"-"+string(runid.New())))
	if err != nil {
		return nil, "", err
	}
	root, err := filepath.Abs(opt.Root)
	if err != nil {
		return nil, "", err
	}
	p := &Plan{Format: planFormat, Revision: opt.Versions["revision"], Created: time.Now().UTC().Format(time.RFC3339), Root: root, Out: out}
	for _, e := range exps {
		sum, err := fileSHA256(filepath.Join(root, e.File))
		if err != nil {
			return nil, "", err
		}
		p.Experiments = append(p.Experiments, PlanExperiment{Name: e.Name, File: e.File, SHA256: sum, Seeds: e.Seeds})
		for _, s := range e.Seeds {
			p.Tasks = append(p.Tasks, Task{Index: len(p.Tasks), Experiment: e.Name, Seed: s})
		}
	}
	if err := p.Write(); err != nil {
		return nil, "", err
	}
	_, id, err := ReadPlan(filepath.Join(out, PlanFile))
	return p, id, err
}

// runExperiment runs the plan's tasks of one experiment and judges them.
func runExperiment(ctx context.Context, p *Plan, id string, e *Experiment, opt Options) *Outcome {
	begin := time.Now()
	o := newOutcome(e, p, opt.Versions)
	o.Started = begin.UTC().Format(time.RFC3339)
	defer func() { o.Seconds = time.Since(begin).Seconds() }()
	pr, err := runner.Prepare(filepath.Join(opt.Root, e.File))
	if err != nil {
		o.Error = err.Error()
		judge(e, o)
		return o
	}
	o.Switch = pr.Exp.Switch != nil
	for _, t := range p.Tasks {
		if t.Experiment != e.Name || ctx.Err() != nil {
			continue
		}
		fmt.Fprintf(opt.Log, "-- %s, seed %d\n", e.Name, t.Seed)
		m, _, err := runTask(ctx, p, id, t, e, pr, opt)
		if err != nil {
			o.Runs = append(o.Runs, RunOutcome{Seed: t.Seed, Error: err.Error()})
			continue
		}
		o.Runs = append(o.Runs, m.Run)
	}
	judge(e, o)
	return o
}

// newOutcome is an experiment's outcome before its runs.
func newOutcome(e *Experiment, p *Plan, versions map[string]string) *Outcome {
	return &Outcome{Name: e.Name, Title: e.Title, Paper: e.Paper, File: e.File, Compare: e.Compare, Started: p.Created,
		Metrics: e.Metrics, Order: e.Order, Figures: e.Figures, Versions: versions}
}

// runSeed runs every variant with one workload seed and measures them.
func runSeed(ctx context.Context, e *Experiment, p *runner.Prepared, seed int64, opt Options) RunOutcome {
	r := RunOutcome{Seed: seed}
	for _, s := range p.Skipped {
		r.Variants = append(r.Variants, VariantOutcome{CC: s.CC, Status: "not loaded", Reason: s.Reason})
	}
	ps, err := p.Reseed(seed)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	id := runid.New()
	r.RunID = string(id)
	res, runErr := runner.Run(ctx, ps, runner.Options{Out: opt.Out, ID: id, Log: opt.Log, Versions: opt.Versions, Extensions: opt.Extensions})
	if res != nil {
		r.Dir = res.Dir
	}
	r.Variants = append(r.Variants, measureVariants(ctx, e, ps, r.Dir, opt.Log)...)
	for try := 1; try <= opt.Retries && ctx.Err() == nil; try++ {
		if !retryDegraded(ctx, e, ps, &r, opt) {
			break
		}
	}
	slices.SortStableFunc(r.Variants, func(a, b VariantOutcome) int {
		return slices.Index(e.Compare, a.CC) - slices.Index(e.Compare, b.CC)
	})
	if runErr != nil {
		r.Error = runErr.Error()
	}
	return r
}

// retryDegraded runs the variants of r that were judged degraded again
// with the same seed, in a run of their own, and takes the new outcomes,
// keeping the earlier verdicts beside them. A run degraded by the machine
// (CPU time stolen by the hypervisor, a late delay line) measured the
// machine; the claims only count faithful runs, so a second run is the
// way to a number. It reports whether anything was retried.
func retryDegraded(ctx context.Context, e *Experiment, ps *runner.Prepared, r *RunOutcome, opt Options) bool {
	var again []runner.Variant
	for _, v := range ps.Variants {
		if vo := r.variant(v.CC); vo != nil && vo.Status == "ran" && vo.Fidelity != "faithful" {
			again = append(again, v)
		}
	}
	if len(again) == 0 {
		return false
	}
	sub := *ps
	sub.Variants = again
	id := runid.New()
	var names []string
	for _, v := range again {
		names = append(names, v.CC)
	}
	fmt.Fprintf(opt.Log, "-- %s, seed %d: running %v again (judged degraded), run %s\n", e.Name, r.Seed, names, id)
	res, err := runner.Run(ctx, &sub, runner.Options{Out: opt.Out, ID: id, Log: opt.Log, Versions: opt.Versions, Extensions: opt.Extensions})
	if err != nil && res == nil {
		fmt.Fprintf(opt.Log, "retry of %v: %v\n", names, err)
		return false
	}
	for _, nv := range measureVariants(ctx, e, &sub, res.Dir, opt.Log) {
		vo := r.variant(nv.CC)
		nv.Earlier = append(slices.Clone(vo.Earlier), vo.Dir+": "+vo.Fidelity)
		*vo = nv
	}
	return true
}

// variantDir is where a run wrote a variant: its own directory when the
// experiment compares several.
func variantDir(runDir string, p *runner.Prepared, cc string) string {
	if len(p.Exp.Compare) > 0 {
		return filepath.Join(runDir, cc)
	}
	return runDir
}

// measureVariants analyses every variant of a run that has ended, one per
// CPU at a time (nothing else runs then), in p's order.
func measureVariants(ctx context.Context, e *Experiment, p *runner.Prepared, runDir string, log io.Writer) []VariantOutcome {
	out := make([]VariantOutcome, len(p.Variants))
	log = &lockedWriter{w: log}
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, v := range p.Variants {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			out[i] = measureVariant(ctx, e, p, v.CC, variantDir(runDir, p, v.CC), log)
		}()
	}
	wg.Wait()
	return out
}

// lockedWriter lets concurrent analyses share one log.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// measureVariant analyses one variant's run directory with the
// experiment's measure and keeps its metrics.
func measureVariant(ctx context.Context, e *Experiment, p *runner.Prepared, cc, dir string, log io.Writer) VariantOutcome {
	vo := VariantOutcome{CC: cc, Dir: dir, Status: "ran"}
	h, fid, err := readHealth(dir)
	if err != nil {
		vo.Status, vo.Reason = "failed", err.Error()
		return vo
	}
	vo.Health, vo.Fidelity = h, fid
	if needsSwitch(p, cc) && !h.SwitchActive {
		vo.Reason = "the law reads the switch's INT records or ECN marks, but this run wrote no queues.csv: the switch was not active"
	}
	fmt.Fprintf(log, "[%s] analysing %s\n", cc, dir)
	cfg := report.Config{Window: time.Duration(e.Analysis.Window), FairThreshold: e.Analysis.Fair, FairHold: time.Duration(e.Analysis.Hold),
		Measure: e.Measure, Group: e.Group}
	if cfg.Window == 0 {
		cfg.Window = time.Millisecond
	}
	a, err := report.AnalyzeRun(ctx, dir, cfg)
	if err != nil {
		vo.Status, vo.Reason = "failed", "analysis: "+err.Error()
		return vo
	}
	if _, err := report.Write(a, filepath.Join(dir, "analysis")); err != nil {
		vo.Status, vo.Reason = "failed", "analysis: "+err.Error()
		return vo
	}
	// The analysis took the experiment's measure; the suite judges it.
	m := a.Measures[0]
	vo.Metrics, vo.Samples = m.Metrics, m.Samples
	v := report.NewMeasureView(a, m.RateBps)
	// A figure that cannot be drawn costs the page a picture, not the
	// variant its numbers.
	if err := writeSideBySide(e, v, cc, dir); err != nil {
		fmt.Fprintf(log, "[%s] %v\n", cc, err)
	}
	return vo
}

// readHealth reads the emulation health from run.json.
func readHealth(dir string) (*Health, string, error) {
	b, err := os.ReadFile(filepath.Join(dir, rundir.RunJSON))
	if err != nil {
		return nil, "", fmt.Errorf("run.json: %w", err)
	}
	var rj runner.RunJSON
	if err := json.Unmarshal(b, &rj); err != nil {
		return nil, "", fmt.Errorf("%s: %w", filepath.Join(dir, rundir.RunJSON), err)
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
	if _, err := os.Stat(filepath.Join(dir, rundir.QueuesCSV)); err == nil {
		h.SwitchActive = true
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, "", err
	}
	fid := rj.Fidelity.String()
	if rj.Fidelity.Verdict == "" {
		fid = "not judged"
	}
	return h, fid, nil
}

// needsSwitch: the telemetry laws cannot work without INT records, the
// ECN laws without marks from the switch.
func needsSwitch(p *runner.Prepared, cc string) bool {
	l := cc
	if v, ok := p.Exp.Variants[cc]; ok {
		l = v.Law
	}
	lw, err := law.ParseLaw(l)
	return err == nil && (lw.UsesINT() || lw.UsesECN())
}
