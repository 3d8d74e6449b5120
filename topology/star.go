package topology

// StarSpec is N:1 incast: Senders hosts and one receiver on one switch.
type StarSpec struct {
	Senders int `yaml:"senders"`
}

// planStar names the receiver h0, the senders h1..h<N>, the switch s0. The
// receiver's link uses the receiver tier: the switch's port towards h0 is
// the incast bottleneck.
func planStar(v *validator, s *StarSpec, links map[string]LinkSpec) *builder {
	if !v.positive("star", "senders", s.Senders, 1, MaxLinks-1) || links == nil {
		return nil
	}
	b := newBuilder()
	for i := 0; i <= s.Senders; i++ {
		b.host("h" + itoa(i))
	}
	b.sw("s0", "switch")
	b.link("h0", "s0", "receiver", links["receiver"])
	for i := 1; i <= s.Senders; i++ {
		b.link("h"+itoa(i), "s0", "host", links["host"])
	}
	return b
}
