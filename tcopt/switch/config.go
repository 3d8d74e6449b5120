// Package intswitch loads the cclab INT software switch (tcopt/bpf/switch.bpf.c)
// onto the egress ports of an emulated network's switches: it measures each
// port's queue, stamps INT records into TCP packets at dequeue, marks ECN
// above a threshold, and samples per-port queue telemetry for queues.csv.
// How and with what limits: README.md in this directory.
//
// The directory is tcopt/switch; the package is intswitch because "switch"
// is a Go keyword.
package intswitch

import (
	"fmt"

	"cclab/internal/units"
	"cclab/orchestrator/topology"
)

// A PortConfig names one switch egress port: a veth end in a switch's
// namespace, and its peer, where the port's packets arrive once the qdisc
// has transmitted them (the dequeue hook runs there).
type PortConfig struct {
	Node      string // switch node owning the port
	Iface     string // the port's interface in Node's namespace
	PeerNode  string // node at the other end of the link (host or switch)
	PeerIface string // the peer's interface
	// Rate is the port's shaped rate, stamped as its INT rate code (a rate
	// that is not a whole number of Mbit/s listed in tcopt/README.md is
	// stamped as code 0, which readers ignore).
	Rate units.Rate
	// ECNThreshold CE-marks ECN-capable packets leaving while more than
	// this many bytes are queued behind them. 0 turns marking off.
	ECNThreshold units.Size
}

// Config is what Attach needs.
type Config struct {
	// Netns returns the namespace name (as in /run/netns) of a node.
	Netns func(node string) string
	Ports []PortConfig
	// Attach chooses tcx links or classic cls_bpf filters; the zero
	// value, AttachAuto, takes tcx where the kernel has it.
	Attach AttachMode
}

// maxPorts matches SWITCH_MAX_PORTS in tcopt/bpf/switch_maps.h.
const maxPorts = 4096

func (c *Config) validate() error {
	if c.Netns == nil {
		return fmt.Errorf("switch config: no Netns function")
	}
	if len(c.Ports) == 0 {
		return fmt.Errorf("switch config: no ports")
	}
	if c.Attach < AttachAuto || c.Attach > AttachClassic {
		return fmt.Errorf("switch config: unknown attach mode %d", int(c.Attach))
	}
	if len(c.Ports) > maxPorts {
		return fmt.Errorf("switch config: %d ports, at most %d", len(c.Ports), maxPorts)
	}
	egress := map[[2]string]bool{}
	peers := map[[2]string]bool{}
	for i, p := range c.Ports {
		if p.Node == "" || p.Iface == "" || p.PeerNode == "" || p.PeerIface == "" {
			return fmt.Errorf("switch port %d: node, iface, peer node and peer iface are all required", i)
		}
		if len(p.Iface) > 15 || len(p.PeerIface) > 15 {
			return fmt.Errorf("switch port %s/%s: interface names are at most 15 characters", p.Node, p.Iface)
		}
		if p.Node == p.PeerNode {
			return fmt.Errorf("switch port %s/%s: peer is on the same node", p.Node, p.Iface)
		}
		e := [2]string{p.Node, p.Iface}
		if egress[e] {
			return fmt.Errorf("switch port %s/%s listed twice", p.Node, p.Iface)
		}
		egress[e] = true
		q := [2]string{p.PeerNode, p.PeerIface}
		if peers[q] {
			return fmt.Errorf("switch port %s/%s: peer %s/%s already fed by another port", p.Node, p.Iface, p.PeerNode, p.PeerIface)
		}
		peers[q] = true
	}
	return nil
}

// PortsFromPlan returns a PortConfig for every link end on a switch node of
// the plan, with the link's rate and the given ECN threshold (0 = off).
func PortsFromPlan(p *topology.Plan, ecnThreshold units.Size) []PortConfig {
	isSwitch := map[string]bool{}
	for _, n := range p.Nodes {
		if n.Role == topology.Switch {
			isSwitch[n.Name] = true
		}
	}
	var ports []PortConfig
	for _, l := range p.Links {
		for _, end := range [2][2]topology.Port{{l.A, l.B}, {l.B, l.A}} {
			if !isSwitch[end[0].Node] {
				continue
			}
			ports = append(ports, PortConfig{
				Node: end[0].Node, Iface: end[0].Iface,
				PeerNode: end[1].Node, PeerIface: end[1].Iface,
				Rate: l.Rate, ECNThreshold: ecnThreshold,
			})
		}
	}
	return ports
}

// rateMbps is the rate in whole Mbit/s, or 0 when it is not one.
func rateMbps(r units.Rate) uint32 {
	bps := r.BitsPerSecond()
	if bps%1_000_000 != 0 || bps/1_000_000 > 1<<31 {
		return 0
	}
	return uint32(bps / 1_000_000)
}
