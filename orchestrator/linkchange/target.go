package linkchange

import (
	"fmt"
	"sort"
	"strings"

	"cclab/topology"
)

// An end is one direction of a link: the egress of port From towards
// the link's other end.
type end struct {
	link int           // index in Plan.Links
	from topology.Port // the egress port
	to   topology.Port
}

// A target is what a Request's Target names: links (both directions) or
// one direction of one link.
type target struct {
	links []int
	ends  []end
	// oneWay: only ends[0]'s direction was named.
	oneWay bool
}

// resolve finds what s names in plan.
func resolve(plan *topology.Plan, s string) (target, error) {
	var t target
	if a, b, ok := strings.Cut(s, ">"); ok {
		i, err := linkBetween(plan, a, b, s)
		if err != nil {
			return t, err
		}
		l := plan.Links[i]
		from, to := l.A, l.B
		if l.A.Node != a {
			from, to = l.B, l.A
		}
		t.links, t.ends, t.oneWay = []int{i}, []end{{link: i, from: from, to: to}}, true
		return t, nil
	}
	if a, b, ok := strings.Cut(s, ":"); ok {
		i, err := linkBetween(plan, a, b, s)
		if err != nil {
			return t, err
		}
		t.links = []int{i}
	} else {
		for i, l := range plan.Links {
			if l.Tier == s {
				t.links = append(t.links, i)
			}
		}
		if len(t.links) == 0 {
			return t, fmt.Errorf("link %q: neither a:b, a>b nor a tier of %s (tiers: %s)", s, plan.Name, strings.Join(tiers(plan), ", "))
		}
	}
	for _, i := range t.links {
		l := plan.Links[i]
		t.ends = append(t.ends, end{link: i, from: l.A, to: l.B}, end{link: i, from: l.B, to: l.A})
	}
	return t, nil
}

func linkBetween(plan *topology.Plan, a, b, s string) (int, error) {
	for _, n := range []string{a, b} {
		if _, ok := plan.Node(n); !ok {
			return 0, fmt.Errorf("link %q: %s has no node %q", s, plan.Name, n)
		}
	}
	for i, l := range plan.Links {
		if (l.A.Node == a && l.B.Node == b) || (l.A.Node == b && l.B.Node == a) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("link %q: no link joins %s and %s in %s", s, a, b, plan.Name)
}

func tiers(plan *topology.Plan) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range plan.Links {
		if !seen[l.Tier] {
			seen[l.Tier] = true
			out = append(out, l.Tier)
		}
	}
	sort.Strings(out)
	return out
}

// names are the links a target touches, as a:b (or a>b).
func (t target) names(plan *topology.Plan) []string {
	if t.oneWay {
		return []string{t.ends[0].from.Node + ">" + t.ends[0].to.Node}
	}
	out := make([]string, len(t.links))
	for k, i := range t.links {
		out[k] = plan.Links[i].A.Node + ":" + plan.Links[i].B.Node
	}
	return out
}
