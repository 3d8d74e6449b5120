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

// A Placement says where a topology's propagation delay goes: at every
// switch port that faces a host, each packet about to enter the port's
// queue first waits out the one-way delay of its whole path (its source
// host to this host). So a path carries exactly its configured delay, in
// one place, before its last queue; every queue in the fabric stays the
// queue it was, and INT reports only queues, never bytes on the wire.
type Placement struct {
	Ports []PortPlan `json:"ports"`
}

// A PortPlan is one delayed port: the switch end of a host's link.
type PortPlan struct {
	Switch string `json:"switch"`
	Iface  string `json:"iface"`
	Host   string `json:"host"`
	// Classes are the distinct one-way delays of the paths into Host.
	Classes []time.Duration `json:"classes_ns"`
	// Sources gives each source host's class (index into Classes).
	Sources map[netip.Addr]int `json:"sources"`
	// Buffers is each class's line buffer in bytes: what the switch's
	// other links can bring in during the class's delay, twice over,
	// plus 1 MiB.
	Buffers []int64 `json:"buffers_bytes"`
}

// Name is how reports call the port: switch/iface.
func (p PortPlan) Name() string { return p.Switch + "/" + p.Iface }

// Place computes the placement of plan's delays; an empty placement when
// no link has a delay. Pairs whose shortest paths differ in delay are an
// error (topology.PathDelays).
func Place(plan *topology.Plan) (*Placement, error) {
	ports, err := plan.DelayPorts()
	if err != nil {
		return nil, err
	}
	pl := &Placement{}
	for _, dp := range ports {
		if len(dp.Classes) > line.MaxClasses {
			return nil, fmt.Errorf("delay: %d distinct path delays into %s, at most %d", len(dp.Classes), dp.Host, line.MaxClasses)
		}
		pp := PortPlan{Switch: dp.Switch, Iface: dp.Iface, Host: dp.Host, Classes: dp.Classes, Sources: dp.Sources}
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
