package live

import (
	"fmt"
	"io"
	"time"
)

// A PortSample is one switch port's queue and counters at a time, with
// what it carried since the previous sample of the same supervisor.
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

// samplePorts reads every switch port; Utilisation is what the port
// transmitted since the last sample over what its rate allows, the number
// INT's txBytes and ts give a law over the same interval.
func (s *supervisor) samplePorts() ([]PortSample, error) {
	if s.sw == nil {
		return nil, nil
	}
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

func logf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, time.Now().Format("2006-01-02T15:04:05.000")+" "+format+"\n", args...)
}
