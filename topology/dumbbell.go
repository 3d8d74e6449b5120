package topology

// DumbbellSpec is two switches joined by one bottleneck link, with
// HostsPerSide hosts on each.
type DumbbellSpec struct {
	HostsPerSide int `yaml:"hosts_per_side"`
}

// planDumbbell names the left hosts h0..h<n-1>, the right ones h<n>..h<2n-1>,
// the left switch s0 and the right one s1.
func planDumbbell(v *validator, s *DumbbellSpec, links map[string]LinkSpec) *builder {
	n := s.HostsPerSide
	if !v.positive("dumbbell", "hosts_per_side", n, 1, MaxLinks/2-1) || links == nil {
		return nil
	}
	b := newBuilder()
	for i := 0; i < 2*n; i++ {
		b.host("h" + itoa(i))
	}
	b.sw("s0", "switch")
	b.sw("s1", "switch")
	for i := 0; i < 2*n; i++ {
		sw := "s0"
		if i >= n {
			sw = "s1"
		}
		b.link("h"+itoa(i), sw, "host", links["host"])
	}
	b.link("s0", "s1", "bottleneck", links["bottleneck"])
	return b
}
