package topology

import (
	"math"

	"cclab/internal/units"
)

// LeafSpineSpec shapes a two-tier leaf-spine fabric: every leaf connects to
// every spine. With Oversubscription set, the leaf-spine link rate is
// derived from it (hosts_per_leaf x host rate / (spines x rate) =
// oversubscription) and links.leaf_spine.rate must be left out or agree.
type LeafSpineSpec struct {
	Leaves           int     `yaml:"leaves"`
	Spines           int     `yaml:"spines"`
	HostsPerLeaf     int     `yaml:"hosts_per_leaf"`
	Oversubscription float64 `yaml:"oversubscription"`
}

// planLeafSpine names hosts h0.. (leaf-major), leaves l<i>, spines s<i>.
func planLeafSpine(v *validator, s *LeafSpineSpec, links map[string]LinkSpec, explicitRate bool) *builder {
	ok := true
	for _, c := range []struct {
		key string
		n   int
	}{{"leaves", s.Leaves}, {"spines", s.Spines}, {"hosts_per_leaf", s.HostsPerLeaf}} {
		ok = v.positive("leafspine", c.key, c.n, 1, MaxLinks) && ok
	}
	if s.Oversubscription < 0 || math.IsNaN(s.Oversubscription) || math.IsInf(s.Oversubscription, 0) {
		v.errf(at("leafspine", "oversubscription"), "leafspine.oversubscription %v: want a positive ratio such as 4 (for 4:1)", s.Oversubscription)
		ok = false
	}
	if !ok {
		return nil
	}
	// Counts are at most MaxLinks each, so the product fits an int.
	if n := s.Leaves*s.HostsPerLeaf + s.Leaves*s.Spines; n > MaxLinks {
		v.errf(at("leafspine"), "leafspine: %d links, the address plan holds %d", n, MaxLinks)
		return nil
	}
	if links == nil {
		return nil
	}
	fabric := links["leaf_spine"]
	if s.Oversubscription != 0 && links["host"].Rate != 0 {
		down := float64(s.HostsPerLeaf) * float64(links["host"].Rate)
		want := units.Rate(math.Round(down / (float64(s.Spines) * s.Oversubscription)))
		switch {
		case explicitRate:
			if math.Abs(float64(fabric.Rate)-float64(want)) > 0.01*float64(want) {
				v.errf(at("links", "leaf_spine", "rate"), "links.leaf_spine.rate %v contradicts oversubscription %v (which needs %v): give one of them", fabric.Rate, s.Oversubscription, want)
				return nil
			}
		case want < MinRate || want > MaxRate:
			v.errf(at("leafspine", "oversubscription"), "leafspine.oversubscription %v gives leaf-spine links of %v, outside %v..%v (limits.go)", s.Oversubscription, want, MinRate, MaxRate)
			return nil
		default:
			fabric.Rate = want
		}
	}
	b := newBuilder()
	n := 0
	for l := 0; l < s.Leaves; l++ {
		for i := 0; i < s.HostsPerLeaf; i++ {
			b.host("h" + itoa(n))
			n++
		}
	}
	for l := 0; l < s.Leaves; l++ {
		b.sw("l"+itoa(l), "leaf")
	}
	for i := 0; i < s.Spines; i++ {
		b.sw("s"+itoa(i), "spine")
	}
	n = 0
	for l := 0; l < s.Leaves; l++ {
		for i := 0; i < s.HostsPerLeaf; i++ {
			b.link("h"+itoa(n), "l"+itoa(l), "host", links["host"])
			n++
		}
	}
	for l := 0; l < s.Leaves; l++ {
		for i := 0; i < s.Spines; i++ {
			b.link("l"+itoa(l), "s"+itoa(i), "leaf_spine", fabric)
		}
	}
	return b
}
