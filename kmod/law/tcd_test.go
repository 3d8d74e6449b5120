package law

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// timelyRun drives TIMELY one completion per ACK (seg_bytes = MSS) through
// the RTT samples (us), UE on the ACKs ue says, and returns the rates
// after each.
func timelyRun(t *testing.T, rtts []uint32, ue func(i int) bool, kv ...string) []Out {
	t.Helper()
	kv = append([]string{"host_bw_mbps=1000", "t_low_ns=50000", "t_high_ns=500000",
		"min_rtt_ns=1000000", "alpha_ppm=875000", fmt.Sprintf("seg_bytes=%d", DefaultMSS)}, kv...)
	c, _ := newCtl(t, Timely, kv...)
	var una uint32
	var outs []Out
	for i, rtt := range rtts {
		una += DefaultMSS
		outs = append(outs, onAck(t, c, Ack{NowNs: uint64(i+1) * 1e6, AckedBytes: DefaultMSS, MSS: DefaultMSS,
			SndNxt: una + 1<<20, SndUna: una, RTTus: rtt, UE: ue(i)}))
	}
	return outs
}

// TIMELY+TCD, the fragment's rule: with tcd on, a completion with a
// positive gradient inside (T_low, T_high) and UE on its ACK leaves the
// rate as it was; without UE the same completion cuts by beta 1.6 times
// the gradient (1 - 1.6 g, here 1 - 1.6 * 0.04375); UE above T_high
// still cuts, and UE with a falling RTT still increases.
func TestTimelyTCDRule(t *testing.T) {
	// 100 us (the first sample: g 0, at line rate), then 150 us: new
	// difference 50 us, rtt_diff 0.875 * 50 = 43.75 us, g = 43.75 us / 1 ms.
	rtts := []uint32{100, 150}
	line := uint64(125e6)
	held := timelyRun(t, rtts, func(i int) bool { return i == 1 }, "tcd=1", "beta_ppm=1600000")
	if held[1].PacingRate != line || !held[1].Trace.Has(TrHold) {
		t.Errorf("UE inside (T_low, T_high), g > 0: rate %d trace %s, want %d held", held[1].PacingRate, held[1].Trace, line)
	}
	cut := timelyRun(t, rtts, func(int) bool { return false }, "tcd=1", "beta_ppm=1600000")
	want := float64(line) * (1 - 1.6*43750/1e6)
	if got := float64(cut[1].PacingRate); math.Abs(got-want) > 2 || !cut[1].Trace.Has(TrDecrease) {
		t.Errorf("no UE, g > 0: rate %.0f trace %s, want %.0f (beta 1.6)", got, cut[1].Trace, want)
	}
	// Above T_high (600 us) UE does not hold: 1 - 1.6 (1 - 500/600).
	high := timelyRun(t, []uint32{100, 600}, func(i int) bool { return i == 1 }, "tcd=1", "beta_ppm=1600000")
	want = float64(line) * (1 - 1.6*(1-500.0/600))
	if got := float64(high[1].PacingRate); math.Abs(got-want) > want*2e-6+1 { // 1 - T_high/RTT in ppm
		t.Errorf("UE above T_high: rate %.0f, want %.0f", got, want)
	}
	// Falling RTT inside the band with UE: still an increase (from a cut rate).
	fall := timelyRun(t, []uint32{100, 150, 120}, func(i int) bool { return i == 2 }, "tcd=1", "beta_ppm=1600000")
	if fall[2].PacingRate <= fall[1].PacingRate {
		t.Errorf("UE with g < 0: rate %d -> %d, want an increase", fall[1].PacingRate, fall[2].PacingRate)
	}
	// At T_low exactly the rule (strict) does not apply: the cut does.
	edge := timelyRun(t, []uint32{40, 50}, func(i int) bool { return i == 1 }, "tcd=1", "beta_ppm=1600000")
	if edge[1].PacingRate >= line {
		t.Errorf("UE at RTT = T_low, g > 0: rate %d, want the gradient's cut", edge[1].PacingRate)
	}
}

// tcd 0 is today's TIMELY bit for bit: random RTTs with UE on random ACKs
// give the same outputs as without UE; and tcd 1 without UE is TIMELY.
func TestTimelyTCDOffUnchanged(t *testing.T) {
	rng := rand.New(rand.NewSource(32))
	rtts := make([]uint32, 400)
	for i := range rtts {
		rtts[i] = 20 + uint32(rng.Intn(700))
	}
	ue := make([]bool, len(rtts))
	for i := range ue {
		ue[i] = rng.Intn(2) == 0
	}
	none := func(int) bool { return false }
	plain := timelyRun(t, rtts, none)
	withUE := timelyRun(t, rtts, func(i int) bool { return ue[i] })
	tcdNoUE := timelyRun(t, rtts, none, "tcd=1")
	tcdUE := timelyRun(t, rtts, func(i int) bool { return ue[i] }, "tcd=1")
	checkTCDOff(t, "TIMELY", plain, withUE, tcdNoUE, tcdUE)
}

// checkTCDOff: the law's outputs with tcd 0 and UE, and with tcd 1 and no
// UE, are plain's exactly; with tcd 1 and UE some differ.
func checkTCDOff(t *testing.T, name string, plain, withUE, tcdNoUE, tcdUE []Out) {
	t.Helper()
	differ := 0
	for i := range plain {
		if withUE[i] != plain[i] || tcdNoUE[i] != plain[i] {
			t.Fatalf("ACK %d: tcd 0 with UE %+v, tcd 1 without UE %+v, %s %+v", i, withUE[i], tcdNoUE[i], name, plain[i])
		}
		if tcdUE[i] != plain[i] {
			differ++
		}
	}
	if differ == 0 {
		t.Errorf("tcd 1 with UE never differed from %s", name)
	}
}

// dcqcnRun feeds DCQCN ACKs (1448 bytes each) at the given times (ns)
// with ECE and UE as marked, and returns the outputs.
func dcqcnRun(t *testing.T, acks []dcqcnAck, kv ...string) []Out {
	t.Helper()
	kv = append([]string{"host_bw_mbps=1000", "byte_counter_bytes=0"}, kv...)
	c, _ := newCtl(t, DCQCN, kv...)
	var una uint32
	var outs []Out
	for _, a := range acks {
		una += DefaultMSS
		ack := Ack{NowNs: a.at, AckedBytes: DefaultMSS, MSS: DefaultMSS, SndNxt: una + 1<<20, SndUna: una, ECE: a.ece, UE: a.ue}
		if a.ece {
			ack.ECEBytes = DefaultMSS
		}
		outs = append(outs, onAck(t, c, ack))
	}
	return outs
}

type dcqcnAck struct {
	at      uint64
	ece, ue bool
}

// DCQCN+TCD, cclab's reading: a UE-only ACK cuts half of what a CNP
// would (RC (1 - alpha/4)) and leaves alpha alone; a second UE within N
// does nothing; a CE ACK is a CNP as in DCQCN, also right after a UE cut.
func TestDCQCNTCDGentleCut(t *testing.T) {
	const line = 125e6
	// A CNP at 1 ms (alpha 1: RC = line/2), then 200 us of quiet: alpha
	// decays over three 55 us periods, the rate recovers partly.
	base := []dcqcnAck{{at: 1e6, ece: true}, {at: 1.2e6}}
	run := func(last ...dcqcnAck) []Out {
		return dcqcnRun(t, append(append([]dcqcnAck{}, base...), last...), "tcd=1")
	}
	before := run()[1]
	alpha := float64(before.SignalPPM) / 1e6
	ue := run(dcqcnAck{at: 1.2e6 + 1000, ue: true})[2]
	want := float64(before.PacingRate) * (1 - alpha/4)
	if got := float64(ue.PacingRate); math.Abs(got-want) > 2 || ue.SignalPPM != before.SignalPPM {
		t.Errorf("UE without CE: rate %.0f alpha %d, want %.0f (1 - alpha/4, alpha %.4f) and alpha kept", got, ue.SignalPPM, want, alpha)
	}
	ce := run(dcqcnAck{at: 1.2e6 + 1000, ece: true})[2]
	if ce.PacingRate >= ue.PacingRate || ce.SignalPPM <= before.SignalPPM {
		t.Errorf("CE: rate %d alpha %d; want below the UE cut's %d and alpha raised from %d", ce.PacingRate, ce.SignalPPM, ue.PacingRate, before.SignalPPM)
	}
	if ue.PacingRate >= before.PacingRate || before.PacingRate >= line {
		t.Fatalf("rates: before %d, after UE %d", before.PacingRate, ue.PacingRate)
	}
	// Within N (50 us) of a UE cut, UE again: no second cut.
	twice := run(dcqcnAck{at: 1.2e6 + 1000, ue: true}, dcqcnAck{at: 1.2e6 + 2000, ue: true})
	if twice[3].PacingRate < twice[2].PacingRate {
		t.Errorf("second UE within N: rate %d -> %d, want no cut", twice[2].PacingRate, twice[3].PacingRate)
	}
	// CE right after a UE cut is a CNP at once (U never delays a CNP).
	after := run(dcqcnAck{at: 1.2e6 + 1000, ue: true}, dcqcnAck{at: 1.2e6 + 2000, ece: true})
	if !after[3].Trace.Has(TrECE) || after[3].PacingRate >= after[2].PacingRate {
		t.Errorf("CE 1 us after a UE cut: trace %s rate %d -> %d, want a CNP", after[3].Trace, after[2].PacingRate, after[3].PacingRate)
	}
}

// tcd 0 is today's DCQCN bit for bit: random marks with UE on random ACKs
// give the same outputs as without UE; tcd 1 without UE is DCQCN; tcd 1
// with UE differs.
func TestDCQCNTCDOffUnchanged(t *testing.T) {
	rng := rand.New(rand.NewSource(33))
	var acks, noUE []dcqcnAck
	now := uint64(1e6)
	for i := 0; i < 2000; i++ {
		now += uint64(1 + rng.Intn(20000))
		a := dcqcnAck{at: now, ece: rng.Intn(10) == 0, ue: rng.Intn(3) == 0}
		acks = append(acks, a)
		a.ue = false
		noUE = append(noUE, a)
	}
	plain := dcqcnRun(t, noUE)
	withUE := dcqcnRun(t, acks)
	tcdNoUE := dcqcnRun(t, noUE, "tcd=1")
	tcdUE := dcqcnRun(t, acks, "tcd=1")
	checkTCDOff(t, "DCQCN", plain, withUE, tcdNoUE, tcdUE)
}
