package lawload

import (
	"context"
	"testing"
	"time"
)

// Between losses the glue's loss envelope grows as Reno's window does: one
// segment per window of acknowledged segments, one per round trip for a
// bulk flow. Measured over a drop-tail bottleneck with offloads on, in
// samples 50 ms apart in congestion avoidance (Open, above ssthresh, no
// loss in between), against the smoothed RTT; kernel Reno, on the same
// path, is the control of the measure. Counted in rounds of snd_una
// passing snd_nxt, the envelope grew 1.46 segments per RTT here (TSO holds
// back up to a 64 KB skb, so snd_nxt trails the window and the rounds came
// short); Reno and now the envelope: 0.95-0.99.
func TestLossEnvelopeGrowsAsReno(t *testing.T) {
	r := loadForTest(t, "dctcp")
	for _, cc := range []string{"reno", r.Name} {
		n := newTestNet(t, testRate, testBuf, true)
		s := n.flows(t, context.Background(), cc, 1, 0, 3*time.Second)[0].samples
		var segs, rtts float64
		for i := 5; i < len(s); i++ {
			a, b := s[i-5], s[i]
			if a.caState != 0 || b.caState != 0 || a.ssthresh != b.ssthresh || a.cwnd <= a.ssthresh || b.cwnd < a.cwnd {
				continue
			}
			srtt := time.Duration((a.rttUs+b.rttUs)/2) * time.Microsecond
			if srtt <= 0 {
				continue
			}
			segs += float64(b.cwnd - a.cwnd)
			rtts += float64(b.at-a.at) / float64(srtt)
		}
		if rtts < 100 {
			t.Fatalf("%s: only %.0f round trips in congestion avoidance", cc, rtts)
		}
		per := segs / rtts
		t.Logf("%s: window grew %.0f segments over %.0f smoothed RTTs: %.2f per RTT", cc, segs, rtts, per)
		if per < 0.8 || per > 1.2 {
			t.Errorf("%s: %.2f segments per RTT in congestion avoidance, want ~1", cc, per)
		}
	}
}
