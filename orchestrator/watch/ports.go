package watch

import (
	"fmt"
	"sync"
	"time"

	"cclab/tcopt/intswitch"
)

// A PortSample is one switch port's queue and counters at a time, with
// what it carried since the previous sample.
type PortSample struct {
	Node  string `json:"node"`
	Iface string `json:"iface"`
	// AtNs is CLOCK_REALTIME, ns.
	AtNs        int64   `json:"at_unix_ns"`
	QueueBytes  uint64  `json:"queue_bytes"`
	Transmitted uint64  `json:"transmitted_bytes"`
	Dropped     uint64  `json:"dropped_packets"`
	RateBps     uint64  `json:"rate_bps"` // the rate the port stamps into INT
	Utilisation float64 `json:"utilisation"`
	Stamped     uint64  `json:"int_stamped"`
}

// A PortSampler reads a switch's ports; Utilisation is what a port
// transmitted since the sampler's previous sample over what its rate
// allows: the number INT's txBytes and ts give a law over that interval.
type PortSampler struct {
	sw   *intswitch.Switch
	mu   sync.Mutex
	last []PortSample
}

// NewPortSampler samples sw's ports.
func NewPortSampler(sw *intswitch.Switch) *PortSampler { return &PortSampler{sw: sw} }

// Sample reads every port now.
func (s *PortSampler) Sample() ([]PortSample, error) {
	ps, err := s.sw.Stats()
	if err != nil {
		return nil, fmt.Errorf("switch counters: %w", err)
	}
	now := time.Now().UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]PortSample, len(ps))
	for i, p := range ps {
		o := PortSample{Node: p.Node, Iface: p.Iface, AtNs: now, QueueBytes: p.Backlog, Transmitted: p.Transmitted,
			Dropped: p.DroppedPkts, Stamped: p.Stamped}
		if mbps, err := s.sw.Rate(p.Node, p.Iface); err == nil {
			o.RateBps = uint64(mbps) * 1_000_000
		}
		if i < len(s.last) && s.last[i].Node == o.Node && s.last[i].Iface == o.Iface && o.RateBps > 0 {
			dt := float64(now-s.last[i].AtNs) / 1e9
			if dt > 0 && o.Transmitted >= s.last[i].Transmitted {
				o.Utilisation = float64(o.Transmitted-s.last[i].Transmitted) * 8 / dt / float64(o.RateBps)
			}
		}
		out[i] = o
	}
	s.last = out
	return out, nil
}
