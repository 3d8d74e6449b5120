package topology

// LineSpec is two hosts joined by a chain of Switches switches: the
// simplest multi-hop path (INT records per hop, option overflow).
type LineSpec struct {
	Switches int `yaml:"switches"`
}

// planLine builds h0 - s0 - s1 - ... - s<N-1> - h1.
func planLine(v *validator, s *LineSpec, links map[string]LinkSpec) *builder {
	if !v.positive("line", "switches", s.Switches, 1, 1000) || links == nil {
		return nil
	}
	b := newBuilder()
	b.host("h0")
	b.host("h1")
	for i := 0; i < s.Switches; i++ {
		b.sw("s"+itoa(i), "switch")
	}
	b.link("h0", "s0", "host", links["host"])
	for i := 1; i < s.Switches; i++ {
		b.link("s"+itoa(i-1), "s"+itoa(i), "switch", links["switch"])
	}
	b.link("s"+itoa(s.Switches-1), "h1", "host", links["host"])
	return b
}
