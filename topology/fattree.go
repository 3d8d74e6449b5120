package topology

import "fmt"

// FatTreeSpec shapes a three-tier fat-tree. Either K alone (the classic
// k-ary fat-tree: k pods of k/2 edge and k/2 aggregation switches, (k/2)^2
// cores, k/2 hosts per edge, k^3/4 hosts), or the explicit shape, which
// also describes the scaled-down, oversubscribed trees of the papers.
type FatTreeSpec struct {
	K               int `yaml:"k"`
	Pods            int `yaml:"pods"`
	EdgesPerPod     int `yaml:"edges_per_pod"`
	AggsPerPod      int `yaml:"aggs_per_pod"`
	Cores           int `yaml:"cores"`
	HostsPerEdge    int `yaml:"hosts_per_edge"`
	CoreLinksPerAgg int `yaml:"core_links_per_agg"` // default cores/aggs_per_pod
}

// shape resolves K into the explicit shape and checks it; false when a
// count is bad (the errors are in v). Every count is checked before any
// is divided by or multiplied into the size of the plan.
func (f FatTreeSpec) shape(v *validator) (FatTreeSpec, bool) {
	explicit := f.Pods != 0 || f.EdgesPerPod != 0 || f.AggsPerPod != 0 || f.Cores != 0 || f.HostsPerEdge != 0 || f.CoreLinksPerAgg != 0
	if v.has("fattree", "k") || f.K != 0 {
		switch {
		case explicit:
			v.errf(at("fattree", "k"), "fattree: give k or the explicit shape (pods, edges_per_pod, ...), not both")
		case f.K < 2 || f.K%2 != 0:
			v.errf(at("fattree", "k"), "fattree.k = %d: k must be even and at least 2 (k pods of k/2 edge and k/2 aggregation switches)", f.K)
		case f.K > 32:
			v.errf(at("fattree", "k"), "fattree.k = %d: at most 32 (k^3/4 hosts; the address plan holds %d links)", f.K, MaxLinks)
		default:
			h := f.K / 2
			return FatTreeSpec{K: f.K, Pods: f.K, EdgesPerPod: h, AggsPerPod: h, Cores: h * h, HostsPerEdge: h, CoreLinksPerAgg: h}, true
		}
		return f, false
	}
	if !explicit {
		v.errf(at("fattree"), "fattree: give k (even, at least 2) or the explicit shape (pods, edges_per_pod, aggs_per_pod, cores, hosts_per_edge)")
		return f, false
	}
	ok := true
	for _, c := range []struct {
		key string
		n   int
	}{{"pods", f.Pods}, {"edges_per_pod", f.EdgesPerPod}, {"aggs_per_pod", f.AggsPerPod}, {"cores", f.Cores}, {"hosts_per_edge", f.HostsPerEdge}} {
		ok = v.positive("fattree", c.key, c.n, 1, MaxLinks) && ok
	}
	if v.has("fattree", "core_links_per_agg") || f.CoreLinksPerAgg != 0 {
		ok = v.positive("fattree", "core_links_per_agg", f.CoreLinksPerAgg, 1, max(f.Cores, 1)) && ok
	}
	if !ok {
		return f, false
	}
	if f.CoreLinksPerAgg == 0 {
		if f.Cores%f.AggsPerPod != 0 {
			v.errf(at("fattree", "cores"), "fattree: %d cores do not split evenly over %d aggregation switches per pod: set core_links_per_agg", f.Cores, f.AggsPerPod)
			return f, false
		}
		f.CoreLinksPerAgg = f.Cores / f.AggsPerPod
	}
	if (f.AggsPerPod*f.CoreLinksPerAgg)%f.Cores != 0 {
		v.errf(at("fattree", "core_links_per_agg"), "fattree: %d aggregation switches x %d core links do not reach the %d cores evenly", f.AggsPerPod, f.CoreLinksPerAgg, f.Cores)
		return f, false
	}
	// Counts are at most MaxLinks each, so these products fit an int.
	hosts := f.Pods * f.EdgesPerPod * f.HostsPerEdge
	links := hosts + f.Pods*f.EdgesPerPod*f.AggsPerPod + f.Pods*f.AggsPerPod*f.CoreLinksPerAgg
	if hosts > MaxHosts || links > MaxLinks {
		v.errf(at("fattree"), "fattree: %d hosts and %d links, the address plan holds %d and %d", hosts, links, MaxHosts, MaxLinks)
		return f, false
	}
	return f, true
}

// planFatTree wires pods of edge (ToR) and aggregation switches: every edge
// to every aggregation switch of its pod, aggregation switch j of each pod
// to cores j*u .. j*u+u-1 (mod cores), u = core_links_per_agg.
//
// Names: hosts h0.. (pod-major), edges e<pod>-<i>, aggregation a<pod>-<i>,
// cores c<i>.
func planFatTree(v *validator, spec *FatTreeSpec, links map[string]LinkSpec) *builder {
	f, ok := spec.shape(v)
	if !ok || links == nil {
		return nil
	}
	b := newBuilder()
	hosts := f.Pods * f.EdgesPerPod * f.HostsPerEdge
	for i := 0; i < hosts; i++ {
		b.host("h" + itoa(i))
	}
	edge := func(p, i int) string { return fmt.Sprintf("e%d-%d", p, i) }
	agg := func(p, i int) string { return fmt.Sprintf("a%d-%d", p, i) }
	for p := 0; p < f.Pods; p++ {
		for i := 0; i < f.EdgesPerPod; i++ {
			b.sw(edge(p, i), "edge")
		}
	}
	for p := 0; p < f.Pods; p++ {
		for i := 0; i < f.AggsPerPod; i++ {
			b.sw(agg(p, i), "agg")
		}
	}
	for i := 0; i < f.Cores; i++ {
		b.sw("c"+itoa(i), "core")
	}
	h := 0
	for p := 0; p < f.Pods; p++ {
		for e := 0; e < f.EdgesPerPod; e++ {
			for i := 0; i < f.HostsPerEdge; i++ {
				b.link("h"+itoa(h), edge(p, e), "host", links["host"])
				h++
			}
		}
	}
	for p := 0; p < f.Pods; p++ {
		for e := 0; e < f.EdgesPerPod; e++ {
			for a := 0; a < f.AggsPerPod; a++ {
				b.link(edge(p, e), agg(p, a), "edge_agg", links["edge_agg"])
			}
		}
	}
	for p := 0; p < f.Pods; p++ {
		for a := 0; a < f.AggsPerPod; a++ {
			for i := 0; i < f.CoreLinksPerAgg; i++ {
				c := (a*f.CoreLinksPerAgg + i) % f.Cores
				b.link(agg(p, a), "c"+itoa(c), "agg_core", links["agg_core"])
			}
		}
	}
	return b
}
