package topology

import "net/netip"

// A Route is a switch's route to one host: every neighbour on a shortest
// path is an equal-cost next hop. A next hop with no gateway is the host
// itself on a directly attached port.
type Route struct {
	Dst      netip.Prefix `json:"dst"` // the host's /32
	NextHops []NextHop    `json:"next_hops"`
}

// A NextHop leaves through Iface towards Gateway (the peer's link address;
// invalid when the destination is on that port).
type NextHop struct {
	Iface   string     `json:"iface"`
	Gateway netip.Addr `json:"gateway"`
}

// Routes computes the forwarding table of every switch: for each host, a
// breadth-first search from the host over switches gives each switch's
// distance; a switch's next hops are its neighbours one step closer.
// Hosts do not forward, so paths never cross another host.
func (p *Plan) Routes() map[string][]Route {
	role := map[string]Role{}
	for _, n := range p.Nodes {
		role[n.Name] = n.Role
	}
	// adj[node] lists (egress port of node, neighbour's port).
	type hop struct{ me, peer Port }
	adj := map[string][]hop{}
	for _, l := range p.Links {
		adj[l.A.Node] = append(adj[l.A.Node], hop{l.A, l.B})
		adj[l.B.Node] = append(adj[l.B.Node], hop{l.B, l.A})
	}
	out := map[string][]Route{}
	for _, h := range p.Nodes {
		if h.Role != Host {
			continue
		}
		dist := map[string]int{h.Name: 0}
		queue := []string{h.Name}
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			for _, e := range adj[cur] {
				nb := e.peer.Node
				if _, seen := dist[nb]; seen || role[nb] != Switch {
					continue
				}
				dist[nb] = dist[cur] + 1
				queue = append(queue, nb)
			}
		}
		for _, s := range p.Nodes {
			d, ok := dist[s.Name]
			if s.Role != Switch || !ok {
				continue
			}
			r := Route{Dst: netip.PrefixFrom(h.Addr, 32)}
			for _, e := range adj[s.Name] {
				nd, ok := dist[e.peer.Node]
				if !ok || nd != d-1 {
					continue
				}
				nh := NextHop{Iface: e.me.Iface}
				if role[e.peer.Node] == Switch {
					nh.Gateway = e.peer.Addr.Addr()
				}
				r.NextHops = append(r.NextHops, nh)
			}
			out[s.Name] = append(out[s.Name], r)
		}
	}
	return out
}

// Gateway returns a host's default gateway: the address of the switch end
// of its link.
func (p *Plan) Gateway(host string) (iface string, gw netip.Addr, ok bool) {
	for _, l := range p.Links {
		if l.A.Node == host {
			return l.A.Iface, l.B.Addr.Addr(), true
		}
		if l.B.Node == host {
			return l.B.Iface, l.A.Addr.Addr(), true
		}
	}
	return "", netip.Addr{}, false
}
