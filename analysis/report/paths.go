package report

import (
	"math"
	"net/netip"

	"cclab/analysis/metrics"
	"cclab/topology"
	"cclab/topology/ideal"
)

// pathIdeal fills each flow's base RTT, ideal FCT, bottleneck and slowdown.
func pathIdeal(a *Analysis, in input, cfg Config, hosts map[netip.Addr]string) {
	framing := in.framing
	if framing.MSS == 0 {
		framing = cfg.Framing
	}
	paths := map[[2]string]ideal.Path{}
	warned := false
	for i := range a.Flows {
		f := &a.Flows[i]
		var p ideal.Path
		ok := false
		if in.plan != nil && f.Src != "" && f.Dst != "" {
			k := [2]string{f.Src, f.Dst}
			if pp, seen := paths[k]; seen {
				p, ok = pp, true
			} else if pp, err := ideal.PathOf(in.plan, f.Src, f.Dst, framing); err == nil {
				paths[k], p, ok = pp, pp, true
			}
		}
		if !ok && cfg.BottleneckBps > 0 {
			p = ideal.Path{BottleneckBps: cfg.BottleneckBps, OneWayDelay: cfg.BaseRTT / 2, HopSerialise: cfg.BaseRTT - 2*(cfg.BaseRTT/2)}
			ok = true
		}
		if ok {
			f.BaseRTT = p.BaseRTT()
			if f.Ideal == 0 && f.Size > 0 {
				f.Ideal = p.FCT(f.Size, framing)
			}
		}
		f.Slowdown = metrics.Num(math.NaN())
		if f.Complete && f.Ideal > 0 {
			f.Slowdown = metrics.Num(ideal.Slowdown(f.FCT, f.Ideal))
		} else if f.Complete && !warned {
			warned = true
			a.Warnings = append(a.Warnings, "some flows have no ideal FCT (no topology and no --rate): their slowdown is not computed")
		}
	}
	if in.plan != nil {
		bottlenecks(a, in.plan)
	}
}

// bottlenecks names each flow's bottleneck: the slowest link on its path;
// among equally slow links, the one the most flows cross, then the last on
// the path (nearest the receiver, where incast congests).
func bottlenecks(a *Analysis, plan *topology.Plan) {
	name := func(l topology.Link) string { return l.A.Node + "-" + l.B.Node }
	paths := make([][]topology.Link, len(a.Flows))
	count := map[string]int{}
	for i, f := range a.Flows {
		if f.Src == "" || f.Dst == "" {
			continue
		}
		p, err := plan.Path(f.Src, f.Dst)
		if err != nil {
			continue
		}
		paths[i] = p
		for _, l := range p {
			count[name(l)]++
		}
	}
	for i, p := range paths {
		var best *topology.Link
		for j := range p {
			l := &p[j]
			if best == nil || l.Rate < best.Rate || (l.Rate == best.Rate && count[name(*l)] >= count[name(*best)]) {
				best = l
			}
		}
		if best != nil {
			a.Flows[i].Bottleneck = name(*best)
		}
	}
}

// hostOf maps addresses (host identities and port addresses) to node names.
func hostOf(p *topology.Plan) map[netip.Addr]string {
	m := map[netip.Addr]string{}
	if p == nil {
		return m
	}
	for _, n := range p.Nodes {
		if n.Addr.IsValid() {
			m[n.Addr] = n.Name
		}
	}
	for _, l := range p.Links {
		for _, pt := range []topology.Port{l.A, l.B} {
			if pt.Addr.IsValid() {
				if _, ok := m[pt.Addr.Addr()]; !ok {
					m[pt.Addr.Addr()] = pt.Node
				}
			}
		}
	}
	return m
}
