package report

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"cclab/analysis/ideal"
	"cclab/analysis/metrics"
	"cclab/analysis/pcapflows"
	"cclab/analysis/series"
	"cclab/orchestrator/topology"
)

// Config tunes an analysis. Zero fields take the defaults of Defaults.
type Config struct {
	Window        time.Duration   // throughput and fairness window
	FairThreshold float64         // Jain index counted as fair
	FairHold      time.Duration   // how long it must stay fair
	EqualPct      float64         // width of equal-count bins, % of flows
	Edges         []uint64        // fixed bin edges
	Classes       metrics.Classes // short and long flows
	// For captures without a run: the slowest link rate and base RTT
	// (or a topology plan giving them per path), and the framing.
	BottleneckBps uint64
	BaseRTT       time.Duration
	Framing       ideal.Framing
	Plan          *topology.Plan
	// Progress, when set, is told what is being done on long work.
	Progress func(msg string)
}

// Defaults fills the zero fields of c.
func (c Config) Defaults() Config {
	if c.Window == 0 {
		c.Window = time.Millisecond
	}
	if c.FairThreshold == 0 {
		c.FairThreshold = 0.95
	}
	if c.FairHold == 0 {
		c.FairHold = 10 * c.Window
	}
	if c.EqualPct == 0 {
		c.EqualPct = 5
	}
	if c.Edges == nil {
		c.Edges = metrics.PowerTCPEdges
	}
	if c.Classes == (metrics.Classes{}) {
		c.Classes = metrics.DefaultClasses
	}
	if c.Framing.MSS == 0 {
		c.Framing = ideal.DefaultFraming
	}
	return c
}

// Flow is one flow as the analysis sees it.
type Flow struct {
	ID              string         `json:"id"`
	Src             string         `json:"src,omitempty"` // host names, when known
	Dst             string         `json:"dst,omitempty"`
	Client          netip.AddrPort `json:"client"`
	Server          netip.AddrPort `json:"server"`
	Size            uint64         `json:"size_bytes"`
	CC              string         `json:"cc,omitempty"`
	Group           string         `json:"group,omitempty"`
	Status          string         `json:"status"`
	Complete        bool           `json:"complete"`
	TimingSource    string         `json:"timing_source"` // app (flows.csv) or pcap
	Start           int64          `json:"start_ns"`      // capture clock
	End             int64          `json:"end_ns"`
	FCT             time.Duration  `json:"fct_ns"`
	Ideal           time.Duration  `json:"ideal_fct_ns"`
	Slowdown        metrics.Num    `json:"slowdown"` // NaN (null in JSON) when not complete or no ideal
	BaseRTT         time.Duration  `json:"base_rtt_ns"`
	Bottleneck      string         `json:"bottleneck,omitempty"`
	Capture         string         `json:"capture,omitempty"`          // capture the packet timings came from (the initiator's)
	DeliveryCapture string         `json:"delivery_capture,omitempty"` // capture throughput and fairness came from (where the data arrived)
	PcapStatus      string         `json:"pcap_status,omitempty"`
	PcapFCT         time.Duration  `json:"pcap_fct_ns"`
	Retransmits     uint64         `json:"retransmits"`
	RetransBytes    uint64         `json:"retrans_bytes"`

	tkey   wkey // the capture the timings come from
	key    wkey // the capture the delivered bytes come from
	hasKey bool
	active series.Interval
}

// CCTable is the slowdown tables of one congestion control.
type CCTable struct {
	CC         string            `json:"cc"`
	Flows      int               `json:"flows"`
	Complete   int               `json:"complete"`
	Slowdown   metrics.ShortLong `json:"slowdown"`
	FixedBins  []metrics.Bin     `json:"fixed_bins"`
	EqualBins  []metrics.Bin     `json:"equal_count_bins"`
	FCTSummary metrics.Summary   `json:"fct_ns"`
}

// Mismatch is a flow whose application and packet timings disagree by more
// than one base RTT, or that the application finished but the capture did
// not show finishing.
type Mismatch struct {
	Flow       string        `json:"flow"`
	Reason     string        `json:"reason"`
	AppFCT     time.Duration `json:"app_fct_ns"`
	PcapFCT    time.Duration `json:"pcap_fct_ns"`
	StartDelta time.Duration `json:"start_delta_ns"` // pcap start - app start
	EndDelta   time.Duration `json:"end_delta_ns"`
	RTT        time.Duration `json:"base_rtt_ns"`
}

// Convergence is the time the flows sharing a bottleneck took to become
// fair after the set of active flows changed.
type Convergence struct {
	At        time.Duration `json:"at_ns"` // the change, from the origin
	Flows     int           `json:"flows"` // flows active after it
	Converged bool          `json:"converged"`
	After     time.Duration `json:"after_ns"` // time to fairness from At
}

// FairGroup is the flows sharing one bottleneck.
type FairGroup struct {
	Bottleneck  string             `json:"bottleneck"`
	Flows       []string           `json:"flows"`
	Jain        []series.JainPoint `json:"jain"`
	FirstFair   time.Duration      `json:"first_fair_ns"` // -1 when never
	Convergence []Convergence      `json:"convergence"`
}

// FlowSeries is a flow's throughput over time.
type FlowSeries struct {
	Flow   string          `json:"flow"`
	CC     string          `json:"cc,omitempty"`
	Points []metrics.Point `json:"points"` // bit/s per window
}

// LinkSeries is what one address sent, as seen in one capture.
type LinkSeries struct {
	Capture     string          `json:"capture"`
	Sender      string          `json:"sender"`
	RateBps     uint64          `json:"rate_bps"` // the sender's link rate, 0 if unknown
	Points      []metrics.Point `json:"points"`   // bit/s per window
	Utilisation metrics.Summary `json:"utilisation"`
}

// CaptureInfo summarises one capture file.
type CaptureInfo struct {
	File       string `json:"file"`
	Format     string `json:"format"`
	Packets    uint64 `json:"packets"`
	TCPPackets uint64 `json:"tcp_packets"`
	Skipped    uint64 `json:"skipped"`
	Flows      int    `json:"flows"`
}

// Analysis is everything computed from a run or captures.
type Analysis struct {
	Source     string         `json:"source"` // the run directory or the captures
	RunID      string         `json:"run_id,omitempty"`
	Origin     int64          `json:"origin_ns"` // time zero of every series (capture clock)
	Window     time.Duration  `json:"window_ns"`
	Config     ConfigEcho     `json:"config"`
	Captures   []CaptureInfo  `json:"captures"`
	Flows      []Flow         `json:"flows"`
	ByCC       []CCTable      `json:"by_cc"`
	Mismatches []Mismatch     `json:"mismatches"`
	Fairness   []FairGroup    `json:"fairness"`
	Throughput []FlowSeries   `json:"-"`
	Links      []LinkSeries   `json:"-"`
	Queues     []series.Queue `json:"-"`
	Traces     []series.Trace `json:"-"`
	INT        []INTReport    `json:"int"`
	Warnings   []string       `json:"warnings"`
}

// INTReport is what the INT options in one capture said.
type INTReport struct {
	Capture string            `json:"capture"`
	Stats   series.INTStats   `json:"stats"`
	Queues  []series.INTQueue `json:"queues"`
}

// ConfigEcho records the parameters the numbers depend on.
type ConfigEcho struct {
	WindowNs      int64           `json:"window_ns"`
	FairThreshold float64         `json:"fair_threshold"`
	FairHoldNs    int64           `json:"fair_hold_ns"`
	EqualPct      float64         `json:"equal_count_pct"`
	Classes       metrics.Classes `json:"classes"`
}

// ErrEmpty is a run or capture with no flows to analyse.
var ErrEmpty = errors.New("no flows: nothing to analyse")

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
	app     []AppFlow
	hasApp  bool
	plan    *topology.Plan
	offset  int64
	queues  string
	traces  string
	framing ideal.Framing
}

// AnalyzeRun analyses a run directory (docs/run-directory.md).
func AnalyzeRun(ctx context.Context, dir string, cfg Config) (*Analysis, error) {
	ri, err := readRunInfo(dir)
	if err != nil {
		return nil, err
	}
	app, err := readAppFlows(dir)
	if err != nil {
		return nil, err
	}
	files, err := pcapFiles(dir)
	if err != nil {
		return nil, err
	}
	in := input{source: dir, runID: ri.ID, files: files, app: app, hasApp: len(app) > 0, plan: ri.Topology, offset: ri.ClockOffsetNs, framing: ri.framing()}
	if cfg.Plan != nil {
		in.plan = cfg.Plan
	}
	for _, p := range []struct {
		name string
		dst  *string
	}{{"queues.csv", &in.queues}, {"cc_trace.csv", &in.traces}} {
		if _, err := os.Stat(filepath.Join(dir, p.name)); err == nil {
			*p.dst = filepath.Join(dir, p.name)
		}
	}
	if len(app) == 0 && len(files) == 0 {
		return nil, fmt.Errorf("run %s: flows.csv is empty or missing and there are no captures: %w", dir, ErrEmpty)
	}
	a, err := analyze(ctx, in, cfg.Defaults())
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
	a := &Analysis{Source: in.source, RunID: in.runID, Window: cfg.Window, Config: ConfigEcho{
		WindowNs: int64(cfg.Window), FairThreshold: cfg.FairThreshold, FairHoldNs: int64(cfg.FairHold),
		EqualPct: cfg.EqualPct, Classes: cfg.Classes}}
	progress := func(format string, args ...any) {
		if cfg.Progress != nil {
			cfg.Progress(fmt.Sprintf(format, args...))
		}
	}
	tput := series.NewWindows[wkey](0, cfg.Window)
	links := series.NewWindows[lkey](0, cfg.Window)
	intDec := series.NewINT(len(in.files), cfg.Window)
	caps := make([]*pcapflows.Capture, len(in.files))
	for fi, path := range in.files {
		progress("reading %s (%d of %d)", filepath.Base(path), fi+1, len(in.files))
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
			TCPPackets: c.TCPPackets, Skipped: c.Skipped, Flows: len(c.Flows)})
	}
	views := dedupe(caps)
	hosts := hostOf(in.plan)
	if in.app != nil && !in.hasApp {
		a.Warnings = append(a.Warnings, "flows.csv has no flows: using the captures' view of every connection")
	}
	if in.hasApp {
		a.Flows = fromApp(in, views, caps, a)
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
			a.Flows = append(a.Flows, fromPcap(v, caps, in.files, hosts))
		}
	}
	if len(a.Flows) == 0 {
		return nil, fmt.Errorf("%s: %w", in.source, ErrEmpty)
	}
	pathIdeal(a, in, cfg, hosts)
	a.Origin = origin(a.Flows, caps)
	crossCheck(a, in, views, caps)
	a.ByCC = tables(a.Flows, cfg)
	fairness(a, in.plan, tput, cfg)
	a.Throughput = flowSeries(a, tput)
	a.Links = linkSeries(a, links, caps, in, hosts, cfg)
	a.INT = intReports(a, intDec, in.files)
	if in.queues != "" {
		progress("reading queues.csv")
		q, err := series.ReadQueues(in.queues, in.offset, a.Origin)
		if err != nil {
			return nil, err
		}
		a.Queues = q
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

// view is one connection, as seen by the capture that saw it first.
type view struct {
	file int
	flow *pcapflows.Flow
	// rx is the view where the data arrived last (the receiver's capture,
	// after the bottleneck): throughput and fairness are measured there.
	rxFile int
	rx     *pcapflows.Flow
}

// dedupe keeps one view per connection: a connection appears in the
// captures of both its hosts (and of switches); the capture with the
// earliest start is the initiator's own, closest to what it experienced.
func dedupe(caps []*pcapflows.Capture) []view {
	type tuple struct{ c, s netip.AddrPort }
	byTuple := map[tuple][]view{}
	var order []tuple
	for fi, c := range caps {
		for i := range c.Flows {
			f := &c.Flows[i]
			if f.Status == pcapflows.StatusNoData {
				continue
			}
			t := tuple{f.Client, f.Server}
			if _, ok := byTuple[t]; !ok {
				order = append(order, t)
			}
			vs := byTuple[t]
			merged := false
			for j := range vs {
				if overlaps(vs[j].flow, f) {
					if f.Start < vs[j].flow.Start {
						vs[j].file, vs[j].flow = fi, f
					}
					if f.FirstData > vs[j].rx.FirstData {
						vs[j].rxFile, vs[j].rx = fi, f
					}
					merged = true
					break
				}
			}
			if !merged {
				vs = append(vs, view{fi, f, fi, f})
			}
			byTuple[t] = vs
		}
	}
	var out []view
	for _, t := range order {
		out = append(out, byTuple[t]...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].flow.Start < out[j].flow.Start })
	return out
}

func lastOf(f *pcapflows.Flow) int64 { return max(f.End, f.LastData, f.Start) }

func overlaps(a, b *pcapflows.Flow) bool {
	return a.Start <= lastOf(b) && b.Start <= lastOf(a)
}

func fromPcap(v view, caps []*pcapflows.Capture, files []string, hosts map[netip.Addr]string) Flow {
	f := v.flow
	out := Flow{
		ID: fmt.Sprintf("%s#%d", filepath.Base(files[v.file]), f.ID), Client: f.Client, Server: f.Server,
		Src: hosts[f.Sender().Addr()], Dst: hosts[f.Receiver().Addr()],
		Size: f.Bytes, Status: string(f.Status), Complete: f.Status == pcapflows.StatusComplete,
		TimingSource: "pcap", Start: f.Start, End: f.End, FCT: f.FCT,
	}
	attachPcap(&out, v, files)
	if !out.Complete {
		out.End = 0
	}
	return out
}

func attachPcap(out *Flow, v view, files []string) {
	f := v.flow
	out.Capture = filepath.Base(files[v.file])
	out.PcapStatus, out.PcapFCT = string(f.Status), f.FCT
	out.Retransmits, out.RetransBytes = f.Retransmits, f.RetransBytes
	out.tkey = wkey{v.file, f.ID, f.DataFromClient}
	out.key, out.hasKey = wkey{v.rxFile, v.rx.ID, v.rx.DataFromClient}, true
	out.DeliveryCapture = filepath.Base(files[v.rxFile])
	out.active = series.Interval{Start: v.rx.Start, End: lastOf(v.rx)}
}

// fromApp takes flows.csv as the truth for timings and matches each row to
// its connection in the captures.
func fromApp(in input, views []view, caps []*pcapflows.Capture, a *Analysis) []Flow {
	type tuple struct{ c, s netip.AddrPort }
	byTuple := map[tuple][]view{}
	for _, v := range views {
		t := tuple{v.flow.Client, v.flow.Server}
		byTuple[t] = append(byTuple[t], v)
	}
	var out []Flow
	for _, af := range in.app {
		f := Flow{ID: af.ID, Src: af.Src, Dst: af.Dst, Client: af.SrcAddr, Server: af.DstAddr, Size: af.Size,
			CC: af.CC, Group: af.Group, Status: af.Status, TimingSource: "app"}
		if af.Status == "ok" && af.EndNs > af.StartNs {
			f.Complete = true
			f.Start, f.End = af.StartNs+in.offset, af.EndNs+in.offset
			f.FCT = time.Duration(af.EndNs - af.StartNs)
			if af.FCTNs != 0 && af.FCTNs != af.EndNs-af.StartNs {
				a.Warnings = append(a.Warnings, fmt.Sprintf("flows.csv line %d: fct_ns %d != end_ns - start_ns %d; using end - start", af.Line, af.FCTNs, af.EndNs-af.StartNs))
			}
		} else if af.StartNs != 0 {
			f.Start = af.StartNs + in.offset
		}
		f.Ideal = time.Duration(af.IdealFCTNs)
		cands := append(byTuple[tuple{af.SrcAddr, af.DstAddr}], byTuple[tuple{af.DstAddr, af.SrcAddr}]...)
		// Activity for throughput and fairness comes from the packets, the
		// same clock as the bytes it is compared with.
		if best, ok := nearest(cands, f.Start); ok {
			attachPcap(&f, best, in.files)
		}
		out = append(out, f)
	}
	return out
}

// nearest picks the candidate connection starting closest to start.
func nearest(cands []view, start int64) (view, bool) {
	best, bestD := view{}, int64(math.MaxInt64)
	for _, v := range cands {
		d := v.flow.Start - start
		if d < 0 {
			d = -d
		}
		if start == 0 {
			d = 0
		}
		if d < bestD {
			best, bestD = v, d
		}
	}
	return best, bestD != math.MaxInt64
}

// pathIdeal fills each flow's base RTT, ideal FCT, bottleneck and slowdown.
func pathIdeal(a *Analysis, in input, cfg Config, hosts map[netip.Addr]string) {
	framing := in.framing
	if framing.MSS == 0 {
		framing = cfg.Framing
	}
	paths := map[[2]string]ideal.Path{}
	warned := false
	for i := range a.Flows {
		f := &a.Flows[i]
		var p ideal.Path
		ok := false
		if in.plan != nil && f.Src != "" && f.Dst != "" {
			k := [2]string{f.Src, f.Dst}
			if pp, seen := paths[k]; seen {
				p, ok = pp, true
			} else if pp, err := ideal.PathOf(in.plan, f.Src, f.Dst, framing); err == nil {
				paths[k], p, ok = pp, pp, true
			}
		}
		if !ok && cfg.BottleneckBps > 0 {
			p = ideal.Path{BottleneckBps: cfg.BottleneckBps, OneWayDelay: cfg.BaseRTT / 2, HopSerialise: cfg.BaseRTT - 2*(cfg.BaseRTT/2)}
			ok = true
		}
		if ok {
			f.BaseRTT = p.BaseRTT()
			if f.Ideal == 0 && f.Size > 0 {
				f.Ideal = p.FCT(f.Size, framing)
			}
		}
		f.Slowdown = metrics.Num(math.NaN())
		if f.Complete && f.Ideal > 0 {
			f.Slowdown = metrics.Num(ideal.Slowdown(f.FCT, f.Ideal))
		} else if f.Complete && !warned {
			warned = true
			a.Warnings = append(a.Warnings, "some flows have no ideal FCT (no topology and no --rate): their slowdown is not computed")
		}
	}
	if in.plan != nil {
		bottlenecks(a, in.plan)
	}
}

// bottlenecks names each flow's bottleneck: the slowest link on its path;
// among equally slow links, the one the most flows cross, then the last on
// the path (nearest the receiver, where incast congests).
func bottlenecks(a *Analysis, plan *topology.Plan) {
	name := func(l topology.Link) string { return l.A.Node + "-" + l.B.Node }
	paths := make([][]topology.Link, len(a.Flows))
	count := map[string]int{}
	for i, f := range a.Flows {
		if f.Src == "" || f.Dst == "" {
			continue
		}
		p, err := plan.Path(f.Src, f.Dst)
		if err != nil {
			continue
		}
		paths[i] = p
		for _, l := range p {
			count[name(l)]++
		}
	}
	for i, p := range paths {
		var best *topology.Link
		for j := range p {
			l := &p[j]
			if best == nil || l.Rate < best.Rate || (l.Rate == best.Rate && count[name(*l)] >= count[name(*best)]) {
				best = l
			}
		}
		if best != nil {
			a.Flows[i].Bottleneck = name(*best)
		}
	}
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

// crossCheck compares the application's timings with the packets'.
func crossCheck(a *Analysis, in input, views []view, caps []*pcapflows.Capture) {
	if !in.hasApp || len(in.files) == 0 {
		return
	}
	for _, f := range a.Flows {
		if !f.Complete {
			continue
		}
		m := Mismatch{Flow: f.ID, AppFCT: f.FCT, PcapFCT: f.PcapFCT, RTT: f.BaseRTT}
		switch {
		case !f.hasKey:
			m.Reason = "finished in flows.csv, not found in any capture"
		case f.PcapStatus != string(pcapflows.StatusComplete):
			m.Reason = "finished in flows.csv, " + f.PcapStatus + " in " + f.Capture
		default:
			v := caps[f.tkey.file].Flows[f.tkey.flow]
			m.StartDelta = time.Duration(v.Start - f.Start)
			m.EndDelta = time.Duration(v.End - f.End)
			if v.Bytes != f.Size {
				m.Reason = fmt.Sprintf("flows.csv says %d bytes, the capture %d", f.Size, v.Bytes)
				break
			}
			if f.BaseRTT == 0 {
				continue
			}
			d := f.FCT - f.PcapFCT
			if d < 0 {
				d = -d
			}
			if d <= f.BaseRTT {
				continue
			}
			m.Reason = "FCT differs by more than one base RTT (" + d.String() + ")"
		}
		a.Mismatches = append(a.Mismatches, m)
	}
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

func fairness(a *Analysis, plan *topology.Plan, tput *series.Windows[wkey], cfg Config) {
	groups := map[string][]int{}
	var order []string
	for i, f := range a.Flows {
		if !f.hasKey || f.active.End <= f.active.Start {
			continue
		}
		b := f.Bottleneck
		if b == "" {
			b = "all flows"
		}
		if _, ok := groups[b]; !ok {
			order = append(order, b)
		}
		groups[b] = append(groups[b], i)
	}
	sort.Strings(order)
	for _, b := range order {
		idx := groups[b]
		if len(idx) < 2 {
			continue
		}
		members := map[wkey]series.Interval{}
		g := FairGroup{Bottleneck: b, FirstFair: -1}
		type event struct {
			t int64
			d int
		}
		var events []event
		for _, i := range idx {
			f := a.Flows[i]
			members[f.key] = f.active
			g.Flows = append(g.Flows, f.ID)
			events = append(events, event{f.active.Start, +1}, event{f.active.End, -1})
		}
		g.Jain = series.Jain(tput, members)
		pts := make([]metrics.Point, len(g.Jain))
		for i := range g.Jain {
			g.Jain[i].T -= time.Duration(a.Origin)
			pts[i] = metrics.Point{T: g.Jain[i].T, V: g.Jain[i].Index.F()}
		}
		// Sweep the starts (+1) and ends (-1) in time order: after each
		// change of the active set, how long until the index holds.
		sort.Slice(events, func(i, j int) bool { return events[i].t < events[j].t })
		fair := metrics.NewFairness(pts, cfg.FairThreshold, cfg.FairHold)
		if at, ok := fair.From(0); ok {
			g.FirstFair = at
		}
		active := 0
		for k := 0; k < len(events); {
			e := events[k].t
			for ; k < len(events) && events[k].t == e; k++ {
				active += events[k].d
			}
			if active < 2 {
				continue
			}
			c := Convergence{At: time.Duration(e - a.Origin), Flows: active}
			next := time.Duration(math.MaxInt64)
			if k < len(events) {
				next = time.Duration(events[k].t - a.Origin)
			}
			if at, ok := fair.From(c.At); ok && at < next {
				c.Converged, c.After = true, at-c.At
			}
			g.Convergence = append(g.Convergence, c)
		}
		a.Fairness = append(a.Fairness, g)
	}
}

func flowSeries(a *Analysis, tput *series.Windows[wkey]) []FlowSeries {
	var out []FlowSeries
	for _, f := range a.Flows {
		if !f.hasKey {
			continue
		}
		first, last, ok := tput.Span(f.key)
		if !ok {
			continue
		}
		pts := tput.Rate(f.key, first, last)
		for i := range pts {
			pts[i].T -= time.Duration(a.Origin)
		}
		out = append(out, FlowSeries{Flow: f.ID, CC: f.CC, Points: pts})
	}
	return out
}

func linkSeries(a *Analysis, links *series.Windows[lkey], caps []*pcapflows.Capture, in input, hosts map[netip.Addr]string, cfg Config) []LinkSeries {
	keys := links.Keys()
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].file != keys[j].file {
			return keys[i].file < keys[j].file
		}
		return keys[i].src.Less(keys[j].src)
	})
	var out []LinkSeries
	for _, k := range keys {
		first, last, ok := links.Span(k)
		if !ok {
			continue
		}
		ls := LinkSeries{Capture: filepath.Base(in.files[k.file]), Sender: k.src.String()}
		if h, ok := hosts[k.src]; ok {
			ls.Sender = h
			if _, l, ok := in.plan.HostPort(h); ok {
				ls.RateBps = l.Rate.BitsPerSecond()
			}
		} else if in.plan != nil {
			continue // a switch or foreign address: not a host link
		}
		if ls.RateBps == 0 {
			ls.RateBps = cfg.BottleneckBps
		}
		ls.Points = links.Rate(k, first, last)
		util := make([]float64, len(ls.Points))
		for i := range ls.Points {
			ls.Points[i].T -= time.Duration(a.Origin)
			if ls.RateBps > 0 {
				util[i] = ls.Points[i].V / float64(ls.RateBps)
			}
		}
		if ls.RateBps > 0 {
			ls.Utilisation = metrics.Summarize(util)
		}
		out = append(out, ls)
	}
	// A run captures every host port, so each host's sending shows up in
	// its peers' captures too: keep the sender's own capture
	// (<host>-<iface>.pcap) when the names say which that is.
	var own []LinkSeries
	for _, l := range out {
		if strings.HasPrefix(l.Capture, l.Sender+"-") {
			own = append(own, l)
		}
	}
	if len(own) > 0 {
		return own
	}
	return out
}

// ShortFlowP999 is the headline of the seeds' tables.
func (t CCTable) ShortFlowP999() float64 { return t.Slowdown.Short.P999.F() }

func fmtF(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func intReports(a *Analysis, dec *series.INT, files []string) []INTReport {
	var out []INTReport
	qs := dec.Queues()
	for fi, st := range dec.Stats {
		if st.Packets == 0 && st.Invalid == 0 {
			continue
		}
		r := INTReport{Capture: filepath.Base(files[fi]), Stats: st}
		for _, q := range qs {
			if q.File != fi {
				continue
			}
			for i := range q.Points {
				q.Points[i].T -= time.Duration(a.Origin)
			}
			r.Queues = append(r.Queues, q)
		}
		out = append(out, r)
	}
	return out
}
