// Package ideal computes a flow's ideal completion time with HPCC's
// definition (the one its published FCT data and the PowerTCP and
// fast-convergence papers' slowdowns use): the time the flow would take
// alone on an idle network,
//
//	ideal = baseRTT + totalBytes * 8 / b
//
// where b is the slowest link rate on the path, totalBytes counts the
// per-packet header bytes, and baseRTT is twice the one-way propagation
// delay plus one MTU's serialisation per hop.
package ideal

import (
	"fmt"
	"time"

	"cclab/topology"
)

// Framing describes how payload becomes bytes on the wire.
type Framing struct {
	MSS         int // payload bytes per full segment
	HeaderBytes int // per-packet bytes beyond payload (Ethernet+IP+TCP+options)
}

// DefaultFraming is a 1500-byte MTU over Ethernet without TCP options:
// 1460 bytes of payload and 54 bytes of headers (14 + 20 + 20).
var DefaultFraming = Framing{MSS: 1460, HeaderBytes: 54}

// Path is what the ideal FCT needs to know about a path.
type Path struct {
	BottleneckBps uint64        // slowest link rate, bit/s
	OneWayDelay   time.Duration // sum of configured link delays
	HopSerialise  time.Duration // sum over links of one MTU at that link's rate
}

// PathOf summarises the shortest path between two hosts of a plan.
func PathOf(p *topology.Plan, src, dst string, f Framing) (Path, error) {
	links, err := p.Path(src, dst)
	if err != nil {
		return Path{}, err
	}
	if len(links) == 0 {
		return Path{}, fmt.Errorf("ideal fct: %s and %s are the same host", src, dst)
	}
	mtuBits := uint64(f.MSS+f.HeaderBytes) * 8
	var out Path
	for _, l := range links {
		r := l.Rate.BitsPerSecond()
		if r == 0 {
			return Path{}, fmt.Errorf("ideal fct: link %s-%s has no rate", l.A.Node, l.B.Node)
		}
		if out.BottleneckBps == 0 || r < out.BottleneckBps {
			out.BottleneckBps = r
		}
		out.OneWayDelay += l.Delay.D()
		out.HopSerialise += time.Duration(mtuBits * 1e9 / r)
	}
	return out, nil
}

// BaseRTT is twice the propagation delay plus one MTU's serialisation per hop.
func (p Path) BaseRTT() time.Duration { return 2*p.OneWayDelay + p.HopSerialise }

// WireBytes is size payload bytes plus the headers of the packets carrying it.
func (f Framing) WireBytes(size uint64) uint64 {
	if size == 0 {
		return 0
	}
	pkts := (size + uint64(f.MSS) - 1) / uint64(f.MSS)
	return size + pkts*uint64(f.HeaderBytes)
}

// FCT is the ideal completion time of a flow of size payload bytes.
func (p Path) FCT(size uint64, f Framing) time.Duration {
	bits := f.WireBytes(size) * 8
	return p.BaseRTT() + time.Duration(bits*1e9/p.BottleneckBps)
}

// Slowdown is fct / ideal, clamped at >= 1.
func Slowdown(fct, ideal time.Duration) float64 {
	if ideal <= 0 {
		return 1
	}
	s := float64(fct) / float64(ideal)
	if s < 1 {
		return 1
	}
	return s
}
