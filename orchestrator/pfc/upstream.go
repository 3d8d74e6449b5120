package pfc

import (
	"fmt"
	"time"

	"cclab/orchestrator/netbuild"
	"cclab/tcopt/intswitch"
	"cclab/topology"
)

// Upstream is where the pause of one lossless ingress port acts.
type Upstream struct {
	// Ingress is the switch port whose ingress is counted (its Node and
	// Iface; PeerNode and PeerIface are the upstream).
	Ingress intswitch.PortConfig
	// Port is the upstream's egress, as Open takes it (a switch port or a
	// host's NIC).
	Port Port
	// Delay is the link's one-way delay: the pause lands this long after
	// the crossing.
	Delay time.Duration
	// Host says the upstream is a host's NIC (no switch port state to
	// write for TCD).
	Host bool
}

// Upstreams derives, from the built network, one Upstream per switch port
// of ports: the peer's egress into it, with the link's rate, the FIFO
// limit netbuild.LosslessLimit gave that egress, both namespaces and the
// link's delay. An error if the network is not lossless or its delay not
// link-placed (a path-placed delay is not on the wire a pause stops), or
// a port is not a link of the plan.
func Upstreams(net *netbuild.Network, ports []intswitch.PortConfig) ([]Upstream, error) {
	if !net.Options.Lossless {
		return nil, fmt.Errorf("pfc upstreams: the network was not built lossless (netbuild Options.Lossless)")
	}
	if net.Plan.DelayPlacement != topology.PlaceLink {
		return nil, fmt.Errorf("pfc upstreams: the delay must be link-placed (delay: {placement: link}), not %q", net.Plan.DelayPlacement)
	}
	role := map[string]topology.Role{}
	for _, n := range net.Plan.Nodes {
		role[n.Name] = n.Role
	}
	egress := map[[2]string]topology.EgressPort{}
	for _, e := range net.Plan.Egress() {
		egress[[2]string{e.Node, e.Iface}] = e
	}
	out := make([]Upstream, 0, len(ports))
	for _, p := range ports {
		e, ok := egress[[2]string{p.PeerNode, p.PeerIface}]
		if !ok || e.PeerNode != p.Node || e.PeerIface != p.Iface {
			return nil, fmt.Errorf("pfc upstreams: %s/%s fed by %s/%s is no link of the plan", p.Node, p.Iface, p.PeerNode, p.PeerIface)
		}
		if role[p.Node] != topology.Switch {
			return nil, fmt.Errorf("pfc upstreams: %s/%s is not a switch port", p.Node, p.Iface)
		}
		out = append(out, Upstream{
			Ingress: p,
			Port: Port{
				Netns: net.Netns(e.Node), Iface: e.Iface,
				PeerNetns: net.Netns(p.Node), PeerIface: p.Iface,
				Rate: e.Rate, Limit: netbuild.LosslessLimit(e, net.Options),
			},
			Delay: e.Delay.D(),
			Host:  e.Role == topology.Host,
		})
	}
	return out, nil
}
