package topology

// DumbbellSpec is two switches joined by one bottleneck link, with
// HostsPerSide hosts on each, or Left hosts on the left switch and Right
// on the right one (an uneven dumbbell: the TCD fragment's victim-flow
// shape, many senders on one side of the shared link).
type DumbbellSpec struct {
	HostsPerSide int `yaml:"hosts_per_side"`
	Left         int `yaml:"left"`
	Right        int `yaml:"right"`
}

// planDumbbell names the left hosts h0..h<l-1>, the right ones
// h<l>..h<l+r-1>, the left switch s0 and the right one s1.
func planDumbbell(v *validator, s *DumbbellSpec, links map[string]LinkSpec) *builder {
	l, r, ok := dumbbellSides(v, s)
	if !ok || links == nil {
		return nil
	}
	b := newBuilder()
	for i := 0; i < l+r; i++ {
		b.host("h" + itoa(i))
	}
	b.sw("s0", "switch")
	b.sw("s1", "switch")
	for i := 0; i < l+r; i++ {
		sw := "s0"
		if i >= l {
			sw = "s1"
		}
		b.link("h"+itoa(i), sw, "host", links["host"])
	}
	b.link("s0", "s1", "bottleneck", links["bottleneck"])
	return b
}

// dumbbellSides is the hosts on each side: hosts_per_side for both, or
// left and right, never both forms.
func dumbbellSides(v *validator, s *DumbbellSpec) (left, right int, ok bool) {
	if s.Left == 0 && s.Right == 0 {
		n := s.HostsPerSide
		return n, n, v.positive("dumbbell", "hosts_per_side", n, 1, MaxLinks/2-1)
	}
	if s.HostsPerSide != 0 {
		v.errf(at("dumbbell", "hosts_per_side"), "dumbbell: give hosts_per_side or left and right, not both")
		return 0, 0, false
	}
	okL := v.positive("dumbbell", "left", s.Left, 1, MaxLinks-2)
	okR := v.positive("dumbbell", "right", s.Right, 1, MaxLinks-2)
	if okL && okR && s.Left+s.Right > MaxLinks-1 {
		v.errf(at("dumbbell", "right"), "dumbbell: %d hosts: want at most %d", s.Left+s.Right, MaxLinks-1)
		return 0, 0, false
	}
	return s.Left, s.Right, okL && okR
}
