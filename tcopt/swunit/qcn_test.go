package swunit

import (
	"math"
	"testing"

	"cclab/tcopt"
)

// The feedback against the spec (tcopt/README.md "QCN feedback"):
// fb = -((Q - Qeq) + w (Q - Qold)); negative: |fb| capped at (2w+1) Qeq,
// quantised to floor(|fb| * 63 / Fb_max); otherwise none.
func TestQCNFeedbackFormula(t *testing.T) {
	const qeq = 33000
	fbmax := float64((2*QCNW + 1) * qeq)
	for q := uint64(0); q <= 8*qeq; q += 1117 {
		for _, qold := range []uint64{0, q / 2, q, q + 5000, 8 * qeq} {
			fb := -((float64(q) - qeq) + QCNW*(float64(q)-float64(qold)))
			want := uint8(0)
			if fb < 0 {
				want = uint8(math.Floor(math.Min(-fb, fbmax) * tcopt.QCNFbMax / fbmax))
			}
			if got := QCNFeedback(q, qold, qeq); got != want {
				t.Fatalf("Q %d Qold %d Qeq %d: fb %d, want %d (raw %.0f)", q, qold, qeq, got, want, fb)
			}
		}
	}
}

// Named points: at equilibrium and still, none; one Qeq over and still,
// 63/5; rising fast, the cap; falling, none; no congestion point, none.
func TestQCNFeedbackPoints(t *testing.T) {
	const qeq = 10000
	for _, c := range []struct {
		q, qold, qeq uint64
		want         uint8
	}{
		{qeq, qeq, qeq, 0},
		{2 * qeq, 2 * qeq, qeq, 12},
		{3 * qeq, 0, qeq, tcopt.QCNFbMax},
		{1 << 31, 0, qeq, tcopt.QCNFbMax},
		{2 * qeq, 3 * qeq, qeq, 0},
		{qeq + 1, qeq + 1, qeq, 0}, // 1 byte of 5 Qeq quantises to 0
		{2 * qeq, 0, 0, 0},
	} {
		if got := QCNFeedback(c.q, c.qold, c.qeq); got != c.want {
			t.Errorf("Q %d Qold %d Qeq %d: fb %d, want %d", c.q, c.qold, c.qeq, got, c.want)
		}
	}
}

// Intervals lie in qcn_sample * [85, 115] %, every draw residue reaching
// each value of the range.
func TestQCNInterval(t *testing.T) {
	const every = 150000
	seen := map[int64]bool{}
	for r := uint32(0); r < 200; r++ {
		n := QCNInterval(every, r)
		if n < every*(100-JitterPct)/100 || n > every*(100+JitterPct)/100 {
			t.Fatalf("draw %d: interval %d outside 85..115 %% of %d", r, n, every)
		}
		seen[n] = true
	}
	if len(seen) != 2*JitterPct+1 {
		t.Errorf("%d distinct intervals, want %d", len(seen), 2*JitterPct+1)
	}
}

// The credit as switch.bpf.c runs it: a stream of packets is sampled once
// per interval on average, exactly one packet per crossing, and a packet
// longer than an interval is sampled once.
func TestQCNSampling(t *testing.T) {
	const every, pkt = 150000, 1514
	var credit int64
	samples, bytes := 0, uint64(0)
	for i := 0; i < 200000; i++ {
		before := credit
		credit -= pkt
		bytes += pkt
		if !QCNCrossed(before, pkt) {
			continue
		}
		samples++
		credit += QCNRefill(credit, QCNInterval(every, uint32(i*7919)))
		if credit < 0 {
			t.Fatalf("credit %d after a refill", credit)
		}
	}
	want := float64(bytes) / every
	if math.Abs(float64(samples)-want) > want*0.02 {
		t.Errorf("%d samples over %d bytes, want about %.0f (one per %d bytes)", samples, bytes, want, every)
	}
	// A 64 KB packet against 10 KB intervals: one sample, then the credit
	// restarts one interval after it.
	if !QCNCrossed(0, 65536) || QCNCrossed(-1, 1) || QCNCrossed(100, 100) {
		t.Error("crossing: want exactly the packet taking the credit from >= 0 to < 0")
	}
	if got := QCNRefill(-65536, 10000); got != 75536 {
		t.Errorf("refill after a long packet: %d, want 75536 (the credit back to one interval)", got)
	}
	if got := QCNRefill(-500, 10000); got != 10000 {
		t.Errorf("refill after a 500-byte overshoot: %d, want the interval (the overshoot carries)", got)
	}
}
