package topology

import (
	"net/netip"

	"cclab/internal/units"
)

// An EgressPort is one end of a link seen as the queue that sends into it:
// the unit a switch program attaches to and telemetry reports on.
type EgressPort struct {
	Node      string         `json:"node"`
	Iface     string         `json:"iface"`
	Role      Role           `json:"role"` // role of Node
	PeerNode  string         `json:"peer_node"`
	PeerIface string         `json:"peer_iface"`
	Rate      units.Rate     `json:"rate_bps"`
	Buffer    units.Size     `json:"buffer_bytes"` // the bfifo limit at this end
	Delay     units.Duration `json:"delay_ns"`
	Addr      netip.Prefix   `json:"addr"`
	PeerAddr  netip.Prefix   `json:"peer_addr"`
	Tier      string         `json:"tier"`
	Link      int            `json:"link"` // index in Plan.Links
}

// Egress returns both ends of every link as egress ports, in link order (A
// end first). Host ends get the link's HostBuffer.
func (p *Plan) Egress() []EgressPort {
	role := map[string]Role{}
	for _, n := range p.Nodes {
		role[n.Name] = n.Role
	}
	out := make([]EgressPort, 0, 2*len(p.Links))
	for i, l := range p.Links {
		for _, e := range [2][2]Port{{l.A, l.B}, {l.B, l.A}} {
			me, peer := e[0], e[1]
			buf := l.Buffer
			if role[me.Node] == Host && l.HostBuffer != 0 {
				buf = l.HostBuffer
			}
			out = append(out, EgressPort{
				Node: me.Node, Iface: me.Iface, Role: role[me.Node],
				PeerNode: peer.Node, PeerIface: peer.Iface,
				Rate: l.Rate, Buffer: buf, Delay: l.Delay,
				Addr: me.Addr, PeerAddr: peer.Addr, Tier: l.Tier, Link: i,
			})
		}
	}
	return out
}

// SwitchPorts returns the egress ports that belong to switches: where the
// tc switch programs attach (one per switch port, both directions of every
// switch-switch link, and the switch side of every host link).
func (p *Plan) SwitchPorts() []EgressPort {
	var out []EgressPort
	for _, e := range p.Egress() {
		if e.Role == Switch {
			out = append(out, e)
		}
	}
	return out
}

// Switches returns the switch nodes in plan order.
func (p *Plan) Switches() []Node {
	var ss []Node
	for _, n := range p.Nodes {
		if n.Role == Switch {
			ss = append(ss, n)
		}
	}
	return ss
}

// HostByAddr returns the host whose address is a.
func (p *Plan) HostByAddr(a netip.Addr) (Node, bool) {
	for _, n := range p.Nodes {
		if n.Role == Host && n.Addr == a {
			return n, true
		}
	}
	return Node{}, false
}
