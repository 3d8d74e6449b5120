package live

import (
	"fmt"

	"cclab/orchestrator/delay"
	"time"

	"cclab/orchestrator/fidelity"
	"cclab/orchestrator/linkchange"
)

// Status is what `cclab topo status` shows of a live topology.
type Status struct {
	State  State         `json:"state"`
	Uptime time.Duration `json:"uptime_ns"`
	Nodes  int           `json:"nodes"`
	Links  int           `json:"links"`
	Line   *LineHealth   `json:"line,omitempty"` // nil: nothing is delayed (or netem holds it)
	// Switch: the INT switch's counters summed over its ports.
	Switch  SwitchTotals        `json:"switch"`
	Changes []linkchange.Record `json:"changes,omitempty"` // link changes so far, oldest first
}

// LineHealth is the delay line since the topology came up, judged by the
// bounds a run's fidelity verdict uses (docs/fidelity.md).
type LineHealth struct {
	Packets     uint64        `json:"packets"`
	LateP50     time.Duration `json:"late_p50_ns"`
	LateP99     time.Duration `json:"late_p99_ns"`
	LateMax     time.Duration `json:"late_max_ns"`
	BoundP50    time.Duration `json:"bound_p50_ns"`
	BoundP99    time.Duration `json:"bound_p99_ns"`
	BufferDrops uint64        `json:"buffer_drops"` // loss the line caused
	QueueDrops  uint64        `json:"queue_drops"`  // the port's queue refused a delayed packet: real loss
	Inversions  uint64        `json:"inversions"`
	CPUShare    float64       `json:"cpu_share"` // of its CPU since it started
	Healthy     bool          `json:"healthy"`
	Problems    []string      `json:"problems,omitempty"`
}

// SwitchTotals sums the switch's port counters.
type SwitchTotals struct {
	Ports        int    `json:"ports"`
	Transmitted  uint64 `json:"transmitted_bytes"`
	DroppedPkts  uint64 `json:"dropped_packets"`
	Stamped      uint64 `json:"int_stamped"`
	CEMarked     uint64 `json:"ce_marked"`
	QueuedNow    uint64 `json:"queued_bytes"`
	LongestQueue string `json:"longest_queue,omitempty"` // the port with the longest queue now
}

func (s *supervisor) status() (*Status, error) {
	st, err := ReadState(s.id)
	if err != nil {
		return nil, err
	}
	out := &Status{State: st, Uptime: time.Since(s.start), Nodes: len(s.net.Plan.Nodes), Links: len(s.net.Plan.Links)}
	if s.line != nil {
		out.Line = s.lineHealth()
	}
	if s.sw != nil {
		ps, err := s.sw.Stats()
		if err != nil {
			return nil, fmt.Errorf("switch counters: %w", err)
		}
		out.Switch.Ports = len(ps)
		var longest uint64
		for _, p := range ps {
			out.Switch.Transmitted += p.Transmitted
			out.Switch.DroppedPkts += p.DroppedPkts
			out.Switch.Stamped += p.Stamped
			out.Switch.CEMarked += p.CEMarked
			out.Switch.QueuedNow += p.Backlog
			if p.Backlog > longest {
				longest, out.Switch.LongestQueue = p.Backlog, p.Node+"/"+p.Iface
			}
		}
	}
	out.Changes = s.links.Records()
	return out, nil
}

// lineHealth judges the line as a run's verdict does, over its life.
func (s *supervisor) lineHealth() *LineHealth {
	st := s.line.Stats()
	lim := fidelity.DefaultLimits()
	least := s.smallestDelay()
	t := st.Totals()
	h := &LineHealth{
		Packets: t.Packets, LateP50: st.Late.Quantile(0.50), LateP99: st.Late.Quantile(0.99), LateMax: st.MaxLate,
		BoundP50:    time.Duration(lim.LateShare50*float64(least)) + lim.LateAbs50,
		BoundP99:    time.Duration(lim.LateShare99*float64(least)) + lim.LateAbs99,
		BufferDrops: t.BufferDrops, QueueDrops: t.QueueDrops, Inversions: t.Inversions,
	}
	if st.Running > 0 {
		h.CPUShare = float64(st.CPUTime) / float64(st.Running)
	}
	if t.Packets > 0 && h.LateP50 > h.BoundP50 {
		h.Problems = append(h.Problems, fmt.Sprintf("p50 lateness %v above %v", h.LateP50, h.BoundP50))
	}
	if t.Packets > 0 && h.LateP99 > h.BoundP99 {
		h.Problems = append(h.Problems, fmt.Sprintf("p99 lateness %v above %v", h.LateP99, h.BoundP99))
	}
	if t.BufferDrops > 0 {
		h.Problems = append(h.Problems, fmt.Sprintf("%d packets dropped by the line's buffers", t.BufferDrops))
	}
	h.Healthy = len(h.Problems) == 0
	return h
}

// smallestDelay is the least class delay the line applies now.
func (s *supervisor) smallestDelay() time.Duration {
	var least time.Duration
	pl, err := delay.Place(s.links.Plan())
	if err != nil {
		return 0
	}
	for _, p := range pl.Ports {
		for _, d := range p.Classes {
			if d > 0 && (least == 0 || d < least) {
				least = d
			}
		}
	}
	return least
}
