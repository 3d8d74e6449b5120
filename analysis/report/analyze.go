package report

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"cclab/analysis/metrics"
	"cclab/analysis/pcapflows"
	"cclab/analysis/series"
	"cclab/rundir"
	"cclab/topology"
	"cclab/topology/ideal"
)

type wkey struct {
	file, flow int
	fromClient bool
}

type lkey struct {
	file int
	src  netip.Addr
}

type input struct {
	source  string
	runID   string
	files   []string
	app     []rundir.Flow
	hasApp  bool
	plan    *topology.Plan
	offset  int64
	queues  string
	traces  string
	framing ideal.Framing
	// changes are the run's link changes (run.json), nil for captures.
	changes []rundir.LinkChange
	// experiment and topology name the run (run.json), "" for captures.
	experiment, topology string
}

// AnalyzeRun analyses a run directory (docs/run-directory.md).
func AnalyzeRun(ctx context.Context, dir string, cfg Config) (*Analysis, error) {
	ri, err := rundir.ReadInfo(dir)
	if err != nil {
		return nil, err
	}
	if ri.Interrupted != nil && !cfg.Partial {
		return nil, fmt.Errorf("run %s: %s at %s: %w", dir, ri.Interrupted.Cause, ri.Interrupted.At, ErrInterrupted)
	}
	app, err := rundir.ReadFlows(dir)
	if err != nil {
		return nil, err
	}
	files, err := rundir.Captures(dir)
	if err != nil {
		return nil, err
	}
	in := input{source: dir, runID: ri.ID, files: files, app: app, hasApp: len(app) > 0, plan: ri.Topology, offset: ri.ClockOffsetNs, framing: ri.Framing.Ideal()}
	in.experiment = ri.Experiment.Name
	if le := ri.Extensions.LinkEvents; le != nil {
		in.changes = le.Changes
	}
	if ri.Topology != nil {
		in.topology = ri.Topology.Name
	}
	if cfg.Plan != nil {
		in.plan = cfg.Plan
	}
	for _, p := range []struct {
		name string
		dst  *string
	}{{rundir.QueuesCSV, &in.queues}, {rundir.CCTraceCSV, &in.traces}} {
		if _, err := os.Stat(filepath.Join(dir, p.name)); err == nil {
			*p.dst = filepath.Join(dir, p.name)
		}
	}
	if len(app) == 0 && len(files) == 0 {
		return nil, fmt.Errorf("run %s: flows.csv is empty or missing and there are no captures: %w", dir, ErrEmpty)
	}
	if cfg.CalibratedRTT == 0 {
		cfg.CalibratedRTT = ri.Calibration.LargestRTT()
	}
	a, err := analyze(ctx, in, cfg.Defaults())
	if err == nil && ri.Topology != nil {
		if note, ok := ri.Topology.PlumbingNote(); ok {
			a.Warnings = append(a.Warnings, note)
		}
	}
	if err == nil {
		variant := ri.Variant
		if variant == "" {
			variant = filepath.Base(dir)
		}
		a.PFC = ri.Extensions.PFC
		if rows, perr := rundir.ReadPFCChanges(dir); perr != nil {
			a.Warnings = append(a.Warnings, fmt.Sprintf("no pause timeline: %v", perr))
		} else {
			var warn []string
			a.Pauses, warn = pausesOf(rows, in.offset, a.Origin)
			a.Warnings = append(a.Warnings, warn...)
		}
		if p := a.PFC; p != nil && (p.LostEvents > 0 || p.LogDropped > 0) {
			a.Warnings = append(a.Warnings, fmt.Sprintf("the pause record misses changes: %d crossings the switch could not post, %d changes beyond the controller's log", p.LostEvents, p.LogDropped))
		}
		if a.Measures, err = measureRun(a, variant, ri.Experiment.Source, in.plan, cfg); err != nil {
			return nil, fmt.Errorf("run %s: %w", dir, err)
		}
	}
	if err == nil && ri.Fidelity != nil {
		a.Fidelity = []Fidelity{{Variant: filepath.Base(dir), Verdict: ri.Fidelity.Verdict, Reasons: ri.Fidelity.Reasons}}
	}
	if err == nil && ri.Interrupted != nil {
		a.Interrupted = []Interruption{{Variant: filepath.Base(dir), Interrupted: *ri.Interrupted}}
	}
	if err == nil && ri.CaptureDrops > 0 {
		a.Warnings = append(a.Warnings, fmt.Sprintf("the captures dropped %d packets (run.json capture_drops): packet-derived figures (throughput, Jain, INT, pcap FCT) miss them", ri.CaptureDrops))
	}
	return a, err
}

// AnalyzePcaps analyses captures from anywhere; link rates and base RTT
// come from cfg.
func AnalyzePcaps(ctx context.Context, files []string, cfg Config) (*Analysis, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("no capture files given")
	}
	cfg = cfg.Defaults()
	in := input{source: fmt.Sprint(files), files: files, plan: cfg.Plan, framing: cfg.Framing}
	return analyze(ctx, in, cfg)
}

func analyze(ctx context.Context, in input, cfg Config) (*Analysis, error) {
	a := &Analysis{Source: in.source, RunID: in.runID, Version: AnalysisVersion, Experiment: in.experiment, Topology: in.topology, Window: cfg.Window, Config: ConfigEcho{
		WindowNs: int64(cfg.Window), FairThreshold: cfg.FairThreshold, FairHoldNs: int64(cfg.FairHold),
		FairOverlapRTTs: cfg.FairOverlapRTTs, EqualPct: cfg.EqualPct, Classes: cfg.Classes}}
	progress := func(format string, args ...any) {
		if cfg.Progress != nil {
			cfg.Progress(fmt.Sprintf(format, args...))
		}
	}
	eta := newByteETA(in.files)
	tput := series.NewWindows[wkey](0, cfg.Window)
	links := series.NewWindows[lkey](0, cfg.Window)
	intDec := series.NewINT(len(in.files), cfg.Window)
	caps := make([]*pcapflows.Capture, len(in.files))
	for fi, path := range in.files {
		progress("reading %s (%d of %d%s)", filepath.Base(path), fi+1, len(in.files), eta.left(fi))
		c, err := pcapflows.ReadFile(ctx, path, pcapflows.Options{
			Observe: func(p *pcapflows.Packet) {
				tput.Add(wkey{fi, p.Flow, p.FromClient}, p.Time, uint64(p.NewBytes))
				links.Add(lkey{fi, p.Src}, p.Time, uint64(p.WireLen))
				if len(p.Options) > 0 {
					intDec.Add(fi, p.Time, p.Options)
				}
			},
			Progress: func(n uint64, off int64) {
				progress("  %s: %d packets, %d MB", filepath.Base(path), n, off>>20)
			},
		})
		if err != nil {
			return nil, err
		}
		caps[fi] = c
		a.Captures = append(a.Captures, CaptureInfo{File: filepath.Base(path), Format: c.Format, Packets: c.Packets,
			TCPPackets: c.TCPPackets, Skipped: c.Skipped, Flows: len(c.Flows), Cut: c.Cut})
		if c.Cut != nil {
			progress("warning: %s %s", path, c.Cut)
		}
	}
	views := dedupe(caps)
	hosts := hostOf(in.plan)
	if in.app != nil && !in.hasApp {
		a.Warnings = append(a.Warnings, "flows.csv has no flows: using the captures' view of every connection")
	}
	if in.hasApp {
		a.Flows = fromApp(in, views, a)
		matched := map[[2]int]bool{} // timing views used: [file, flow]
		for _, f := range a.Flows {
			if f.hasKey {
				matched[[2]int{f.tkey.file, f.tkey.flow}] = true
			}
		}
		if n := len(views) - len(matched); n > 0 {
			a.Warnings = append(a.Warnings, fmt.Sprintf("%d connections in the captures are not in flows.csv (not analysed)", n))
		}
	} else {
		for _, v := range views {
			a.Flows = append(a.Flows, fromPcap(v, in.files, hosts))
		}
	}
	if len(a.Flows) == 0 {
		return nil, fmt.Errorf("%s: %w", in.source, ErrEmpty)
	}
	pathIdeal(a, in, cfg, hosts)
	a.Origin = origin(a.Flows, caps)
	crossCheck(a, in, caps)
	a.ByCC = tables(a.Flows, cfg)
	fairness(a, tput, cfg)
	a.Throughput = flowSeries(a, tput)
	a.Links = linkSeries(a, links, in, hosts, cfg)
	a.INT = intReports(a, intDec, in.files)
	if in.queues != "" {
		progress("reading queues.csv")
		q, err := series.ReadQueues(in.queues, in.offset, a.Origin)
		if err != nil {
			return nil, err
		}
		a.Queues = q
	}
	if len(in.changes) > 0 {
		a.LinkWindows = linkWindows(in.changes, in.plan, a.Origin, lastTime(a))
	}
	if in.traces != "" {
		progress("reading cc_trace.csv")
		t, err := series.ReadTraces(in.traces, in.offset, a.Origin)
		if err != nil {
			return nil, err
		}
		a.Traces = t
	}
	return a, nil
}

func origin(flows []Flow, caps []*pcapflows.Capture) int64 {
	o := int64(math.MaxInt64)
	for _, f := range flows {
		if f.Start > 0 {
			o = min(o, f.Start)
		}
	}
	for _, c := range caps {
		if c.Packets > 0 {
			o = min(o, c.First)
		}
	}
	if o == math.MaxInt64 {
		return 0
	}
	return o
}

func tables(flows []Flow, cfg Config) []CCTable {
	byCC := map[string]*CCTable{}
	samples := map[string][]metrics.Sample{}
	fcts := map[string][]float64{}
	var order []string
	for _, f := range flows {
		cc := f.CC
		if cc == "" {
			cc = "all"
		}
		t := byCC[cc]
		if t == nil {
			t = &CCTable{CC: cc}
			byCC[cc] = t
			order = append(order, cc)
		}
		t.Flows++
		if f.Complete {
			t.Complete++
			fcts[cc] = append(fcts[cc], float64(f.FCT))
			if !math.IsNaN(f.Slowdown.F()) {
				samples[cc] = append(samples[cc], metrics.Sample{Size: f.Size, Slowdown: f.Slowdown.F()})
			}
		}
	}
	sort.Strings(order)
	var out []CCTable
	for _, cc := range order {
		t := byCC[cc]
		s := samples[cc]
		t.Slowdown = metrics.SplitShortLong(s, cfg.Classes)
		t.FixedBins = metrics.FixedBins(s, cfg.Edges)
		t.EqualBins = metrics.EqualCountBins(s, cfg.EqualPct)
		t.FCTSummary = metrics.Summarize(fcts[cc])
		out = append(out, *t)
	}
	return out
}

func fmtF(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// byteETA estimates the time left reading files from the bytes read so far.
type byteETA struct {
	begin time.Time
	sizes []int64
	total int64
}

func newByteETA(files []string) *byteETA {
	e := &byteETA{begin: time.Now()}
	for _, f := range files {
		var n int64
		if st, err := os.Stat(f); err == nil {
			n = st.Size()
		}
		e.sizes = append(e.sizes, n)
		e.total += n
	}
	return e
}

// left is ", about Ns left" before file i, or "" while there is nothing
// to go by.
func (e *byteETA) left(i int) string {
	var done int64
	for _, n := range e.sizes[:i] {
		done += n
	}
	el := time.Since(e.begin)
	if done == 0 || el < time.Second {
		return ""
	}
	rest := time.Duration(float64(el) * float64(e.total-done) / float64(done))
	return fmt.Sprintf(", about %v left", rest.Round(time.Second))
}
