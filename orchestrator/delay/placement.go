package delay

import (
	"fmt"
	"net/netip"
	"sort"
	"time"

	"cclab/orchestrator/delay/line"
	"cclab/topology"
)

// topology.MaxDelayedHosts is the line's port count (compile-time check).
var (
	_ [line.MaxPorts - topology.MaxDelayedHosts]struct{}
	_ [topology.MaxDelayedHosts - line.MaxPorts]struct{}
)

// A Placement says where a topology's propagation delay goes.
//
// Path placement (the default): at every switch port that faces a host,
// each packet about to enter the port's queue first waits out the one-way
// delay of its whole path (its source host to this host). So a path
// carries exactly its configured delay, in one place, before its last
// queue; every queue in the fabric stays the queue it was, and INT
// reports only queues, never bytes on the wire.
//
// Link placement: at the receiving interface of every delayed link
// (switch port or host), each received packet waits out that link's
// delay and is then received again by the same interface. The bytes the
// line holds for a port are the bytes on that wire, and a delayed packet
// keeps its ingress interface (what PFC's ingress accounting needs).
type Placement struct {
	// Mode is topology.PlaceLink or "" (path).
	Mode  string     `json:"mode,omitempty"`
	Ports []PortPlan `json:"ports"`
}

// Link reports whether pl holds delays per link.
func (pl *Placement) Link() bool { return pl != nil && pl.Mode == topology.PlaceLink }

// A PortPlan is one delayed port: under path placement the switch end of
// a host's link, under link placement a receiving interface.
type PortPlan struct {
	Node  string `json:"node"`
	Iface string `json:"iface"`
	// Host is the host the port faces (path placement); Peer the node
	// that sends into the interface (link placement).
	Host string `json:"host,omitempty"`
	Peer string `json:"peer,omitempty"`
	// Classes are the distinct one-way delays of the paths into Host.
	Classes []time.Duration `json:"classes_ns"`
	// Sources gives each source host's class (index into Classes).
	Sources map[netip.Addr]int `json:"sources"`
	// Buffers is each class's line buffer in bytes: what the switch's
	// other links can bring in during the class's delay, twice over,
	// plus 1 MiB.
	Buffers []int64 `json:"buffers_bytes"`
}

// Name is how reports call the port: node/iface.
func (p PortPlan) Name() string { return p.Node + "/" + p.Iface }

// Place computes the placement of plan's delays, as plan.DelayPlacement
// says; an empty placement when no link has a delay. Under path placement
// pairs whose shortest paths differ in delay are an error
// (topology.PathDelays).
func Place(plan *topology.Plan) (*Placement, error) {
	ports, err := plan.DelayPorts()
	if err != nil {
		return nil, err
	}
	if plan.DelayPlacement == topology.PlaceLink && len(ports) > line.MaxPorts {
		return nil, fmt.Errorf("delay: link placement needs %d line ports, at most %d", len(ports), line.MaxPorts)
	}
	pl := &Placement{Mode: plan.DelayPlacement}
	for _, dp := range ports {
		if len(dp.Classes) > line.MaxClasses {
			return nil, fmt.Errorf("delay: %d distinct path delays into %s, at most %d", len(dp.Classes), dp.Host, line.MaxClasses)
		}
		pp := PortPlan{Node: dp.Node, Iface: dp.Iface, Host: dp.Host, Peer: dp.Peer, Classes: dp.Classes, Sources: dp.Sources}
		for _, b := range dp.Buffers {
			pp.Buffers = append(pp.Buffers, max(b, line.MinBuffer))
		}
		pl.Ports = append(pl.Ports, pp)
	}
	sort.Slice(pl.Ports, func(i, j int) bool { return pl.Ports[i].Name() < pl.Ports[j].Name() })
	return pl, nil
}

// Empty reports whether nothing is delayed.
func (pl *Placement) Empty() bool { return pl == nil || len(pl.Ports) == 0 }

// modeName names pl's placement as topology files write it.
func modeName(pl *Placement) string {
	if pl.Link() {
		return topology.PlaceLink
	}
	return topology.PlacePath
}
