package topology

import (
	"net/netip"

	"cclab/internal/units"
)

// A Plan is a topology file expanded into concrete nodes, links and
// addresses: everything needed to build it, nothing yet created. Planning is
// pure, so every file error is found before anything touches the kernel.
type Plan struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // fattree, leafspine, dumbbell, star, line
	// Purpose is the file's purpose: "plumbing" for a topology without
	// propagation delay, meant for plumbing tests; "" otherwise.
	Purpose string `json:"purpose,omitempty"`
	// DelayPlacement is where the links' propagation delay is held
	// (orchestrator/delay): PlacePath ("", the default) or PlaceLink.
	DelayPlacement string `json:"delay_placement,omitempty"`
	Nodes          []Node `json:"nodes"`
	Links          []Link `json:"links"`
}

// Role says whether a node is an end host or a switch.
type Role string

// The roles of nodes.
const (
	Host   Role = "host"
	Switch Role = "switch"
)

// A Node is one network namespace: a host or a switch (an L3 router with
// ECMP).
type Node struct {
	Name string     `json:"name"` // unique in the plan, e.g. "h0", "edge1-0"
	Role Role       `json:"role"`
	Tier string     `json:"tier"` // host, edge, agg, core, leaf, spine, switch
	Addr netip.Addr `json:"addr"` // a host's /32 address (its identity)
}

// A Link is a veth pair between two ports. Each end's egress is shaped at
// Rate with an HTB root and queued in a byte-limited FIFO of Buffer bytes
// (on a switch end this is the switch's egress buffer).
type Link struct {
	A      Port           `json:"a"`
	B      Port           `json:"b"`
	Rate   units.Rate     `json:"rate_bps"`
	Buffer units.Size     `json:"buffer_bytes"`
	Delay  units.Duration `json:"delay_ns"` // one-way, needs sch_netem when non-zero
	// HostBuffer is the queue at a host's end (its NIC) when one end is a
	// host; Buffer applies to switch ends.
	HostBuffer units.Size `json:"host_buffer_bytes,omitempty"`
	Tier       string     `json:"tier"` // the file's link tier: host, edge_agg, agg_core, ...
}

// A Port is one end of a link.
type Port struct {
	Node  string       `json:"node"`
	Iface string       `json:"iface"` // <= 15 characters
	Addr  netip.Prefix `json:"addr"`  // point-to-point address of this end
}

// Hosts returns the host nodes in plan order.
func (p *Plan) Hosts() []Node {
	var hs []Node
	for _, n := range p.Nodes {
		if n.Role == Host {
			hs = append(hs, n)
		}
	}
	return hs
}

// Node returns the node called name.
func (p *Plan) Node(name string) (Node, bool) {
	for _, n := range p.Nodes {
		if n.Name == name {
			return n, true
		}
	}
	return Node{}, false
}

// HostPort returns the port through which a host reaches the fabric.
func (p *Plan) HostPort(host string) (Port, Link, bool) {
	for _, l := range p.Links {
		if l.A.Node == host {
			return l.A, l, true
		}
		if l.B.Node == host {
			return l.B, l, true
		}
	}
	return Port{}, Link{}, false
}
