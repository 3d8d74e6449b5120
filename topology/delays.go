package topology

import (
	"fmt"
	"time"
)

// A PathDelay is what every shortest path from one host to another has in
// common: its number of switches and its one-way propagation delay (the sum
// of its links' delays).
type PathDelay struct {
	Src, Dst string
	Switches int
	// OneWay is the least delay of the pair's shortest paths; MaxOneWay
	// the greatest (the same unless link placement lets ECMP paths of
	// different delays be).
	OneWay    time.Duration
	MaxOneWay time.Duration
}

// PathDelays returns the path from every host to every other host, in
// plan order. ECMP may send a flow along any shortest path. Under path
// placement all of a pair's shortest paths must have the same delay: the
// delay line puts a path's whole delay in one place (orchestrator/delay)
// and could not tell which path a packet took, so a pair whose shortest
// paths differ in delay is an error naming both sums. Under link
// placement every link holds its own delay and such a pair is fine.
func (p *Plan) PathDelays() ([]PathDelay, error) {
	adj := map[string][]Link{}
	for _, l := range p.Links {
		adj[l.A.Node] = append(adj[l.A.Node], l)
		adj[l.B.Node] = append(adj[l.B.Node], l)
	}
	role := map[string]Role{}
	for _, n := range p.Nodes {
		role[n.Name] = n.Role
	}
	hosts := p.Hosts()
	var out []PathDelay
	for _, src := range hosts {
		// Breadth-first from src; hosts other than src do not forward.
		// Along the way, the least and greatest delay of any shortest
		// path to each node.
		dist := map[string]int{src.Name: 0}
		lo := map[string]time.Duration{src.Name: 0}
		hi := map[string]time.Duration{src.Name: 0}
		queue := []string{src.Name}
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			if cur != src.Name && role[cur] == Host {
				continue
			}
			for _, l := range adj[cur] {
				nb := l.B.Node
				if nb == cur {
					nb = l.A.Node
				}
				d := l.Delay.D()
				nd, seen := dist[nb]
				switch {
				case !seen:
					dist[nb] = dist[cur] + 1
					lo[nb], hi[nb] = lo[cur]+d, hi[cur]+d
					queue = append(queue, nb)
				case nd == dist[cur]+1:
					lo[nb] = min(lo[nb], lo[cur]+d)
					hi[nb] = max(hi[nb], hi[cur]+d)
				}
			}
		}
		for _, dst := range hosts {
			if dst.Name == src.Name {
				continue
			}
			n, ok := dist[dst.Name]
			if !ok {
				return nil, fmt.Errorf("path delays: %s cannot reach %s", src.Name, dst.Name)
			}
			if lo[dst.Name] != hi[dst.Name] && p.DelayPlacement != PlaceLink {
				return nil, fmt.Errorf("path delays: the shortest paths from %s to %s differ in delay (%v and %v); ECMP may take either, so give the links of a tier equal delays", src.Name, dst.Name, lo[dst.Name], hi[dst.Name])
			}
			out = append(out, PathDelay{Src: src.Name, Dst: dst.Name, Switches: n - 1, OneWay: lo[dst.Name], MaxOneWay: hi[dst.Name]})
		}
	}
	return out, nil
}

// HasDelay reports whether any link has a propagation delay.
func (p *Plan) HasDelay() bool {
	for _, l := range p.Links {
		if l.Delay > 0 {
			return true
		}
	}
	return false
}
