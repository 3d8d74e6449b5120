package delay

import (
	"time"

	"cclab/orchestrator/delay/line"
)

// Report is what run.json records of a run's propagation delay.
type Report struct {
	Engine Engine `json:"engine"`
	// Placement is path or link (topology.PlacePath, PlaceLink).
	Placement string `json:"placement"`
	Ports     int    `json:"ports"`
	// MinNs and MaxNs are the smallest and largest delays the ports
	// apply (none aside): one-way path delays under path placement, link
	// delays under link placement.
	MinNs int64 `json:"min_delay_ns"`
	MaxNs int64 `json:"max_delay_ns"`
	// Line is the delay line's account (engine line only).
	Line *LineReport `json:"line,omitempty"`
}

// LineReport is the delay line's account of a run.
type LineReport struct {
	Packets     uint64 `json:"packets"`
	Bytes       uint64 `json:"bytes"`
	Sent        uint64 `json:"sent"`
	BufferDrops uint64 `json:"buffer_drops"` // loss the line caused: its FIFO was full
	QueueDrops  uint64 `json:"queue_drops"`  // the port's queue refused a packet (a real drop)
	SendErrors  uint64 `json:"send_errors"`
	Inversions  uint64 `json:"inversions"`
	MaxHeld     uint64 `json:"max_held_bytes"`
	// Updates is how many times Server.Replace changed the delays;
	// HeldForOrder how many packets waited past their due for their
	// source's packets held under a longer delay before a change.
	Updates      uint64 `json:"updates"`
	HeldForOrder uint64 `json:"held_for_order"`
	// Lateness of each packet's release past its due time.
	LateP50Ns  int64 `json:"late_p50_ns"`
	LateP90Ns  int64 `json:"late_p90_ns"`
	LateP99Ns  int64 `json:"late_p99_ns"`
	LateP999Ns int64 `json:"late_p999_ns"`
	LateMaxNs  int64 `json:"late_max_ns"`
	// Lag between a packet's kernel stamp and the line reading it.
	LagP50Ns int64 `json:"lag_p50_ns"`
	LagP99Ns int64 `json:"lag_p99_ns"`
	// The thread: its CPU, priority, adapted spin margin, CPU time over
	// wall time, and CPU time per Gbit it carried.
	CPU         int     `json:"cpu"`
	RTPriority  int     `json:"rt_priority"`
	MarginNs    int64   `json:"margin_ns"`
	SpinNs      int64   `json:"spin_ns"`
	CPUTimeNs   int64   `json:"cpu_time_ns"`
	RunningNs   int64   `json:"running_ns"`
	CPUShare    float64 `json:"cpu_share"`
	CPUPerGbitS float64 `json:"cpu_seconds_per_gbit"`
}

// NewReport summarises a placement (for the line, what it serves:
// Server.Placement), its engine and, for the line, its statistics.
func NewReport(pl *Placement, engine Engine, st *line.Stats) Report {
	r := Report{Engine: engine}
	if pl.Empty() {
		return r
	}
	r.Placement = modeName(pl)
	r.Ports = len(pl.Ports)
	for _, p := range pl.Ports {
		for _, d := range p.Classes {
			if d == 0 {
				continue
			}
			if r.MinNs == 0 || int64(d) < r.MinNs {
				r.MinNs = int64(d)
			}
			r.MaxNs = max(r.MaxNs, int64(d))
		}
	}
	if st != nil {
		r.Line = NewLineReport(*st)
	}
	return r
}

// NewLineReport summarises line statistics.
func NewLineReport(st line.Stats) *LineReport {
	t := st.Totals()
	lr := &LineReport{
		Packets: t.Packets, Bytes: t.Bytes, Sent: t.Sent, BufferDrops: t.BufferDrops,
		QueueDrops: t.QueueDrops, SendErrors: t.SendErrors, Inversions: t.Inversions, MaxHeld: t.MaxBytes,
		Updates: st.Updates, HeldForOrder: t.HeldForOrder,
		LateP50Ns: ns(st.Late.Quantile(.5)), LateP90Ns: ns(st.Late.Quantile(.9)),
		LateP99Ns: ns(st.Late.Quantile(.99)), LateP999Ns: ns(st.Late.Quantile(.999)), LateMaxNs: ns(st.MaxLate),
		LagP50Ns: ns(st.Lag.Quantile(.5)), LagP99Ns: ns(st.Lag.Quantile(.99)),
		CPU: st.CPU, RTPriority: st.RTPriority, MarginNs: ns(st.Margin), SpinNs: ns(st.Spin),
		CPUTimeNs: ns(st.CPUTime), RunningNs: ns(st.Running),
	}
	if st.Running > 0 {
		lr.CPUShare = float64(st.CPUTime) / float64(st.Running)
	}
	if t.Bytes > 0 {
		lr.CPUPerGbitS = st.CPUTime.Seconds() / (float64(t.Bytes) * 8 / 1e9)
	}
	return lr
}

func ns(d time.Duration) int64 { return int64(d) }
