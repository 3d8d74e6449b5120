package topology

import (
	"net/netip"
	"time"
)

// A DelayPort is where the delay line (orchestrator/delay) holds packets.
// Under path placement it is a switch port that faces a host, holding
// every path into that host: each packet about to enter the port's queue
// first waits out its path's one-way delay. Under link placement it is
// the receiving interface of a link (a switch's or a host's), holding
// that link direction's delay for every packet it receives.
type DelayPort struct {
	// Node and Iface name the interface.
	Node, Iface string
	// Host is the host the port faces (path placement); Peer the node
	// that sends into the interface (link placement).
	Host, Peer string
	// Classes are the distinct non-zero one-way delays of the paths into
	// Host; Sources gives each source host's class (index into Classes).
	Classes []time.Duration
	Sources map[netip.Addr]int
	// Buffers is each class's FIFO in bytes. Path placement: what the
	// switch's other links can bring in during the class's delay, twice
	// over, plus 1 MiB. Link placement: twice the link's bytes in flight
	// (2 x rate x delay) plus 1 MiB.
	Buffers []int64
}

// lineSlack is what every line buffer holds beyond its share of the
// rate: 1 MiB.
const lineSlack = 1 << 20

// DelayPorts returns where the plan's delay is held, in plan order (none
// when no link has a delay). Path placement: the host-facing switch ports
// that delay at least one path; pairs whose shortest paths differ in
// delay are an error (PathDelays). Link placement: LinkDelayPorts.
func (p *Plan) DelayPorts() ([]DelayPort, error) {
	if !p.HasDelay() {
		return nil, nil
	}
	if p.DelayPlacement == PlaceLink {
		return p.LinkDelayPorts(), nil
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
		dp := DelayPort{Node: e.Node, Iface: e.Iface, Host: host.Name, Sources: map[netip.Addr]int{}}
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
			dp.Buffers = append(dp.Buffers, int64(2*in/8*d.Seconds())+lineSlack)
		}
		out = append(out, dp)
	}
	return out, nil
}

// LinkDelayPorts returns, for every link with a delay, its two receiving
// interfaces, in plan order: each holds its direction's delay in one
// class, for packets from every host. Its buffer is twice the link's
// bytes in flight plus lineSlack: an HTB port may put its 64 KiB burst
// and one 64 KB GSO packet beyond its tokens on the wire ahead of its
// rate, the line's ring loses up to one such record where it wraps, and a
// stalled line or packet CPU lets milliseconds of the rate pile up (with
// 2 x 128 KiB of slack a dumbbell run at 1 Gbit/s lost 4 packets in the
// line to a 5 ms stall).
func (p *Plan) LinkDelayPorts() []DelayPort {
	hosts := p.Hosts()
	var out []DelayPort
	for _, l := range p.Links {
		if l.Delay <= 0 {
			continue
		}
		d := l.Delay.D()
		inFlight := int64(float64(l.Rate) / 8 * d.Seconds())
		for _, end := range [][2]Port{{l.A, l.B}, {l.B, l.A}} {
			from, to := end[0], end[1]
			dp := DelayPort{
				Node: to.Node, Iface: to.Iface, Peer: from.Node,
				Classes: []time.Duration{d}, Sources: make(map[netip.Addr]int, len(hosts)),
				Buffers: []int64{2*inFlight + lineSlack},
			}
			for _, h := range hosts {
				dp.Sources[h.Addr] = 0
			}
			out = append(out, dp)
		}
	}
	return out
}
