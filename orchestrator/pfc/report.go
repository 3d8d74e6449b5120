package pfc

import (
	"slices"
)

// Report is what run.json records under extensions.pfc.
type Report struct {
	// Ports lists every upstream egress that was paused at least once.
	Ports          []PortReport `json:"ports"`
	Pauses         int          `json:"pauses"`    // pauses applied (Xoff events acted on)
	PausedNs       int64        `json:"paused_ns"` // summed over ports
	LongestPauseNs int64        `json:"longest_pause_ns"`
	// MaxSpreadHops is how far pauses spread from the congested port: an
	// Xoff of switch S gets 1 + the most hops of S's own egress ports
	// paused when it is read (1: S paused its direct upstream).
	MaxSpreadHops int    `json:"max_spread_hops"`
	Events        uint64 `json:"events"`      // crossings read
	LostEvents    uint64 `json:"lost_events"` // the switch's lost_events summed (ring full)
	// MaxOverBytes is the most any ingress port's occupancy went above
	// its Xoff while paused (intswitch.PFCPort.MaxOver): above the
	// configured headroom, a real switch would have dropped.
	MaxOverBytes int64 `json:"max_over_bytes"`
	// Lateness is each applied change's lateness: when Pause or Resume
	// returned minus (the event's time + the link's delay).
	Lateness Lateness `json:"apply_lateness"`
	// EarlyNs is how early the last change was issued: the running
	// median of the changes' own durations.
	EarlyNs int64 `json:"issued_early_ns"`
	// Realtime says the controller's thread ran SCHED_FIFO.
	Realtime bool `json:"realtime"`
	// SettleNs is how long the controller waited before the workload for
	// its changes to be quick (settle.go); Settled says they were.
	SettleNs int64 `json:"settle_ns"`
	Settled  bool  `json:"settled"`
	// LogDropped counts changes applied beyond the thread's log (not in
	// the counts above).
	LogDropped uint64 `json:"log_dropped,omitempty"`
	// Changes is every change in the order applied: the pause timeline
	// (not in run.json: the runner writes it as pfc.csv).
	Changes []Change `json:"-"`
}

// PortReport is one upstream egress's pauses.
type PortReport struct {
	Node           string `json:"node"`
	Iface          string `json:"iface"`
	PeerNode       string `json:"peer_node"`  // the downstream that paused it
	PeerIface      string `json:"peer_iface"` // its ingress port
	Host           bool   `json:"host"`       // a host's NIC
	Pauses         int    `json:"pauses"`
	PausedNs       int64  `json:"paused_ns"`
	LongestPauseNs int64  `json:"longest_pause_ns"`
	MaxSpreadHops  int    `json:"max_spread_hops"`
	// MaxOverBytes is the downstream ingress port's MaxOver.
	MaxOverBytes int64 `json:"max_over_bytes"`
}

// Lateness summarises the changes' lateness (ns; negative: applied
// before due, when issued early).
type Lateness struct {
	N     int   `json:"n"`
	P50Ns int64 `json:"p50_ns"`
	P99Ns int64 `json:"p99_ns"`
	MaxNs int64 `json:"max_ns"`
}

func summarise(ns []int64) Lateness {
	if len(ns) == 0 {
		return Lateness{}
	}
	s := slices.Clone(ns)
	slices.Sort(s)
	at := func(p float64) int64 { return s[int(p*float64(len(s)-1))] }
	return Lateness{N: len(s), P50Ns: at(0.5), P99Ns: at(0.99), MaxNs: s[len(s)-1]}
}

// portState is the controller's account of one upstream egress.
type portState struct {
	paused    bool
	since     int64 // when the pause was applied (CLOCK_MONOTONIC ns)
	lastXonNs uint64

	pauses    int
	pausedNs  int64
	longestNs int64
	maxHop    int
}

// resumed closes a pause applied at since at t.
func (p *portState) resumed(t int64) {
	d := t - p.since
	p.paused = false
	p.pausedNs += d
	p.longestNs = max(p.longestNs, d)
	p.lastXonNs = uint64(t)
}
