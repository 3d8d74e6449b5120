package topology

import "fmt"

// Path returns the links a packet crosses from node src to node dst along a
// shortest path (fewest hops; the first such path in plan order, so it is
// deterministic). With ECMP the fabric may pick another path of the same
// length and, in the topologies cclab builds, the same link rates.
func (p *Plan) Path(src, dst string) ([]Link, error) {
	if _, ok := p.Node(src); !ok {
		return nil, fmt.Errorf("path: no node %q", src)
	}
	if _, ok := p.Node(dst); !ok {
		return nil, fmt.Errorf("path: no node %q", dst)
	}
	type step struct {
		from string
		link int
	}
	prev := map[string]step{src: {from: "", link: -1}}
	queue := []string{src}
	for len(queue) > 0 {
		if _, found := prev[dst]; found {
			break
		}
		cur := queue[0]
		queue = queue[1:]
		for i, l := range p.Links {
			var next string
			switch cur {
			case l.A.Node:
				next = l.B.Node
			case l.B.Node:
				next = l.A.Node
			default:
				continue
			}
			if _, seen := prev[next]; seen {
				continue
			}
			// Hosts do not forward: only the destination may be a host.
			if n, _ := p.Node(next); n.Role == Host && next != dst {
				continue
			}
			prev[next] = step{from: cur, link: i}
			queue = append(queue, next)
		}
	}
	if _, ok := prev[dst]; !ok {
		return nil, fmt.Errorf("path: %s cannot reach %s", src, dst)
	}
	var path []Link
	for n := dst; n != src; n = prev[n].from {
		path = append([]Link{p.Links[prev[n].link]}, path...)
	}
	return path, nil
}
