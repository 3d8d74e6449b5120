package report

import (
	"errors"
	"net/netip"
	"time"

	"cclab/analysis/metrics"
	"cclab/analysis/pcapflows"
	"cclab/analysis/series"
	"cclab/rundir"
	"cclab/topology"
	"cclab/topology/ideal"
)

// Config tunes an analysis. Zero fields take the defaults of Defaults.
type Config struct {
	Window        time.Duration // throughput and fairness window
	FairThreshold float64       // Jain index counted as fair
	FairHold      time.Duration // how long it must stay fair
	// FairOverlapRTTs: fairness is defined only among flows that share a
	// bottleneck at the same time for at least this many base RTTs (the
	// fast-convergence paper measures flows that overlap); others are
	// left out of the fairness tables.
	FairOverlapRTTs int
	EqualPct        float64         // width of equal-count bins, % of flows
	Edges           []uint64        // fixed bin edges
	Classes         metrics.Classes // short and long flows
	// For captures without a run: the slowest link rate and base RTT
	// (or a topology plan giving them per path), and the framing.
	BottleneckBps uint64
	BaseRTT       time.Duration
	// CalibratedRTT is the run's calibrated RTT (the largest loaded floor
	// of its path classes; run.json's calibration for a run), which Jain's
	// window follows where it exceeds the configured base RTT.
	CalibratedRTT time.Duration
	Framing       ideal.Framing
	Plan          *topology.Plan
	// Progress, when set, is told what is being done on long work.
	Progress func(msg string)
	// Partial analyses a run that a signal interrupted (run.json
	// "interrupted"); without it such a run is refused (ErrInterrupted).
	Partial bool
	// Measure and Group pick the measure a run is measured with
	// (measures.go) and the workload entry it looks at; empty: the one
	// the run's experiment file names in its `reproduce:` block, else
	// every measure that applies.
	Measure, Group string
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
	if c.FairOverlapRTTs == 0 {
		c.FairOverlapRTTs = 10
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
	ID       string         `json:"id"`
	Src      string         `json:"src,omitempty"` // host names, when known
	Dst      string         `json:"dst,omitempty"`
	Client   netip.AddrPort `json:"client"`
	Server   netip.AddrPort `json:"server"`
	Size     uint64         `json:"size_bytes"`
	CC       string         `json:"cc,omitempty"`
	Group    string         `json:"group,omitempty"`
	Status   string         `json:"status"`
	Complete bool           `json:"complete"`
	// TimingSource: "app+rx" (the start is flows.csv's connect, the end
	// the last byte's arrival in the receiver's capture), "app"
	// (flows.csv alone: no complete receiver capture) or "pcap" (no
	// flows.csv).
	TimingSource string `json:"timing_source"`
	// AppEnd is flows.csv's end (the receiver's last read), capture clock.
	AppEnd          int64         `json:"app_end_ns,omitempty"`
	Start           int64         `json:"start_ns"` // capture clock
	End             int64         `json:"end_ns"`
	FCT             time.Duration `json:"fct_ns"`
	Ideal           time.Duration `json:"ideal_fct_ns"`
	Slowdown        metrics.Num   `json:"slowdown"` // NaN (null in JSON) when not complete or no ideal
	BaseRTT         time.Duration `json:"base_rtt_ns"`
	Bottleneck      string        `json:"bottleneck,omitempty"`
	Capture         string        `json:"capture,omitempty"`          // capture the packet timings came from (the initiator's)
	DeliveryCapture string        `json:"delivery_capture,omitempty"` // capture throughput and fairness came from (where the data arrived)
	PcapStatus      string        `json:"pcap_status,omitempty"`
	PcapFCT         time.Duration `json:"pcap_fct_ns"`
	Retransmits     uint64        `json:"retransmits"`
	RetransBytes    uint64        `json:"retrans_bytes"`

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
	Bottleneck string   `json:"bottleneck"`
	Flows      []string `json:"flows"` // those that overlapped another for the stated interval
	// Shared is how long at least two of Flows were active together;
	// MinOverlap the interval a flow had to share (FairOverlapRTTs base
	// RTTs of the group).
	Shared      time.Duration      `json:"shared_ns"`
	MinOverlap  time.Duration      `json:"min_overlap_ns"`
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
	// Cut: the file could not be read to its end; the numbers cover the
	// packets before the damage.
	Cut *pcapflows.Cut `json:"cut,omitempty"`
}

// Analysis is everything computed from a run or captures.
type Analysis struct {
	Source string `json:"source"` // the run directory or the captures
	RunID  string `json:"run_id,omitempty"`
	// Version is the analysis's definitions (AnalysisVersion) when it
	// was made: a summary.json of another version is not comparable.
	Version int `json:"analysis_version"`
	// Experiment and Topology name what was run (from run.json).
	Experiment string        `json:"experiment,omitempty"`
	Topology   string        `json:"topology,omitempty"`
	Origin     int64         `json:"origin_ns"` // time zero of every series (capture clock)
	Window     time.Duration `json:"window_ns"`
	Config     ConfigEcho    `json:"config"`
	Captures   []CaptureInfo `json:"captures"`
	Flows      []Flow        `json:"flows"`
	ByCC       []CCTable     `json:"by_cc"`
	Mismatches []Mismatch    `json:"mismatches"`
	Fairness   []FairGroup   `json:"fairness"`
	// FairSkipped counts the bottlenecks whose flows never shared them
	// long enough for fairness to be defined (Config.FairOverlapRTTs).
	FairSkipped int            `json:"fairness_undefined_bottlenecks"`
	Throughput  []FlowSeries   `json:"-"`
	Links       []LinkSeries   `json:"-"`
	Queues      []series.Queue `json:"-"`
	Traces      []series.Trace `json:"-"`
	// LinkWindows are the times the run's events raised links above
	// their configured rate (linkwindows.go).
	LinkWindows []LinkWindow `json:"link_windows,omitempty"`
	INT         []INTReport  `json:"int"`
	Fidelity    []Fidelity   `json:"fidelity,omitempty"`
	// Measures are the numbers the reproduction suite's claims judge, per
	// variant (measured.go).
	Measures []Measured `json:"measures,omitempty"`
	// Interrupted lists the variants a signal ended early (analysed with
	// Config.Partial): their numbers are not results.
	Interrupted []Interruption `json:"interrupted,omitempty"`
	// PFC is a lossless run's pause record (run.json extensions.pfc);
	// nil for a lossy run or captures.
	PFC *rundir.PFC `json:"pfc,omitempty"`
	// Pauses is a lossless run's pause timeline (pfc.csv), the longest
	// paused port first.
	Pauses   []PortPauses `json:"pauses,omitempty"`
	Warnings []string     `json:"warnings"`
}

// Interruption is one variant's run.json "interrupted".
type Interruption struct {
	Variant string `json:"variant"`
	rundir.Interrupted
}

// Fidelity is one variant's emulation verdict from its run.json
// (docs/fidelity.md): a number from a degraded run is not a result.
type Fidelity struct {
	Variant string   `json:"variant"`
	Verdict string   `json:"verdict"` // faithful or degraded
	Reasons []string `json:"reasons,omitempty"`
}

// INTReport is what the INT options in one capture said.
type INTReport struct {
	Capture string            `json:"capture"`
	Stats   series.INTStats   `json:"stats"`
	Queues  []series.INTQueue `json:"queues"`
}

// ConfigEcho records the parameters the numbers depend on.
type ConfigEcho struct {
	WindowNs      int64   `json:"window_ns"`
	FairThreshold float64 `json:"fair_threshold"`
	FairHoldNs    int64   `json:"fair_hold_ns"`
	// FairOverlapRTTs: base RTTs two flows must share a bottleneck for
	// fairness among them to be reported.
	FairOverlapRTTs int   `json:"fair_overlap_rtts"`
	FairWindowNs    int64 `json:"fair_window_ns"` // Jain\'s window: one RTT (fairWindow)
	// FairWindowRule says which RTT set FairWindowNs: the configured
	// base RTT, the calibrated one or the throughput window.
	FairWindowRule  string          `json:"fair_window_rule"`
	CalibratedRTTNs int64           `json:"calibrated_rtt_ns,omitempty"`
	EqualPct        float64         `json:"equal_count_pct"`
	Classes         metrics.Classes `json:"classes"`
}

// AnalysisVersion counts changes of what the numbers mean: 2 since FCTs
// end at the last byte's arrival and fairness is per stable interval
// (2026-11-25); 3 since the lossless measure's paused time is pfc_paused
// in ns (it was pfc_paused_ms, 2026-11-28); summaries without the field
// are 1.
const AnalysisVersion = 3

// ErrEmpty is a run or capture with no flows to analyse.
var ErrEmpty = errors.New("no flows: nothing to analyse")

// ShortFlowP999 is the headline of the papers' FCT tables.
func (t CCTable) ShortFlowP999() float64 { return t.Slowdown.Short.P999.F() }
