package topology

import (
	"net/netip"
	"time"
)

// A DelayPort is a switch port that faces a host, where the delay line
// (orchestrator/delay) holds every path into that host: each packet about
// to enter the port's queue first waits out its path's one-way delay.
type DelayPort struct {
	Switch, Iface, Host string
	// Classes are the distinct non-zero one-way delays of the paths into
	// Host; Sources gives each source host's class (index into Classes).
	Classes []time.Duration
	Sources map[netip.Addr]int
	// Buffers is each class's FIFO in bytes: what the switch's other
	// links can bring in during the class's delay, twice over, plus
	// 1 MiB.
	Buffers []int64
}

// DelayPorts returns the host-facing switch ports that delay at least
// one path, in plan order (none when no link has a delay). Pairs whose
// shortest paths differ in delay are an error (PathDelays).
func (p *Plan) DelayPorts() ([]DelayPort, error) {
	if !p.HasDelay() {
		return nil, nil
	}
	paths, err := p.PathDelays()
	if err != nil {
		return nil, err
	}
	into := map[string][]PathDelay{}
	for _, pd := range paths {
		into[pd.Dst] = append(into[pd.Dst], pd)
	}
	// fanIn is what can arrive at a switch from all of its links.
	fanIn := map[string]float64{}
	for _, l := range p.Links {
		fanIn[l.A.Node] += float64(l.Rate)
		fanIn[l.B.Node] += float64(l.Rate)
	}
	var out []DelayPort
	for _, e := range p.SwitchPorts() {
		host, ok := p.Node(e.PeerNode)
		if !ok || host.Role != Host {
			continue
		}
		dp := DelayPort{Switch: e.Node, Iface: e.Iface, Host: host.Name, Sources: map[netip.Addr]int{}}
		index := map[time.Duration]int{}
		for _, pd := range into[host.Name] {
			if pd.OneWay == 0 {
				continue
			}
			k, seen := index[pd.OneWay]
			if !seen {
				k = len(dp.Classes)
				index[pd.OneWay] = k
				dp.Classes = append(dp.Classes, pd.OneWay)
			}
			src, _ := p.Node(pd.Src)
			dp.Sources[src.Addr] = k
		}
		if len(dp.Classes) == 0 {
			continue
		}
		// Inflow into the port: everything but the host's own link.
		in := fanIn[e.Node] - float64(e.Rate)
		for _, d := range dp.Classes {
			dp.Buffers = append(dp.Buffers, int64(2*in/8*d.Seconds())+1<<20)
		}
		out = append(out, dp)
	}
	return out, nil
}
