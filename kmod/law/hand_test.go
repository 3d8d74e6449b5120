package law

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// bigCap pins the window cap of PowerTCP, theta-PowerTCP and HPCC well
// above the initial window (6250 B here), whatever the default, so that an
// increase from the initial window shows in the numbers.
const bigCap = "max_cwnd_bytes=1048576"

// replayFile replays a testdata trace with the law's defaults changed by kv.
func replayFile(t *testing.T, l Law, file string, kv ...string) *Result {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ev, err := ReadTrace(f)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return replayEvents(t, l, ev, kv...)
}

// paramsWith is law l's defaults with the assignments kv applied.
func paramsWith(t *testing.T, l Law, kv ...string) *Params {
	t.Helper()
	p, err := DefaultParams(l)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range kv {
		if err := p.SetAssignment(a); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func replayEvents(t *testing.T, l Law, ev []Event, kv ...string) *Result {
	t.Helper()
	p := paramsWith(t, l, kv...)
	res, err := Replay(context.Background(), p, ev, 0)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func wantStep(t *testing.T, s Step, cwnd, signal uint64, flags Trace) {
	t.Helper()
	if s.CwndBytes != cwnd || s.SignalPPM != signal || !s.Trace.Has(flags) {
		t.Errorf("line %d: cwnd %d signal %d trace %s; want cwnd %d signal %d trace with %s",
			s.Line, s.CwndBytes, s.SignalPPM, s.Trace, cwnd, signal, flags)
	}
}

// PowerTCP, defaults: tau = 50 us, HostBw = 1 Gbit/s = 125e6 B/s, so
// cwnd_init = B*tau = 125e6 * 50e-6 = 6250 B, beta = 6250 / N(100) = 62 B,
// gamma = 0.9.
// Row 1 has no previous echo: hold at 6250.
// Row 2, dt = 10 us: dq = 0, txRate = 1250 B / 10 us = 125e6 B/s = B, so
// current = B; voltage = 0 + B*tau; power = B * B*tau / (B^2*tau) = 1.
// Smoothed: (1 * (50-10) + 1 * 10) / 50 = 1 -> 1000000 ppm.
// cwnd = 0.9 * (6250 / 1 + 62) + 0.1 * 6250 = 5680.8 + 625 = 6305.8 -> 6305.
func TestHandPowerTCPUnitPower(t *testing.T) {
	res := replayFile(t, PowerTCP, "powertcp_unit_power.csv", bigCap)
	wantStep(t, res.Steps[0], 6250, 1000000, TrInit)
	wantStep(t, res.Steps[1], 6250, 1000000, TrHold|TrINTPath)
	wantStep(t, res.Steps[2], 6305, 1000000, TrIncrease)
	// Pacing cwnd / tau = 6305 B / 50 us = 126.1e6 B/s, but never above
	// HostBw (the paper's NIC line rate): 125e6 B/s.
	if r := res.Steps[2].PacingRate; r != 125000000 {
		t.Errorf("pacing %d B/s, want 125000000", r)
	}
}

// PowerTCP with a standing queue of one BDP (6250 B) at line rate:
// current = B, voltage = 6250 + 6250 = 2*B*tau: power = 2.
// Smoothed from 1: (1 * 40 + 2 * 10) / 50 = 1.2 -> 1200000 ppm.
// cwnd_old = 6250 (window of the first RTT):
// cwnd = 0.9 * (6250 / 1.2 + 62) + 0.1 * 6250 = 0.9 * (5208 + 62) + 625
//
//	= 4743 + 625 = 5368.
//
// Next row: (1.2 * 40 + 2 * 10) / 50 = 1.36; cwnd = 0.9 * (6250/1.36 + 62)
// + 0.1 * 5368 = 0.9 * (4595 + 62) + 536.8 = 4191.3 + 536.8 = 4728.
func TestHandPowerTCPQueueOfOneBDP(t *testing.T) {
	res := replayFile(t, PowerTCP, "powertcp_queue.csv")
	wantStep(t, res.Steps[2], 5368, 1200000, TrDecrease)
	wantStep(t, res.Steps[3], 4728, 1360000, TrDecrease)
}

// theta-PowerTCP, tau = 50 us: RTT 50 -> 60 us over dt = 10 us:
// dRTT/dt = 10/10 = 1, normPower = (1 + 1) * 60 / 50 = 2.4; smoothed from
// 1: (1 * 40 + 2.4 * 10) / 50 = 1.28 -> 1280000 ppm (row 4 of the trace).
// Row 5, RTT 70: (1 + 1) * 70 / 50 = 2.8; (1.28 * 40 + 2.8 * 10) / 50 = 1.584.
func TestHandThetaPowerTCP(t *testing.T) {
	res := replayFile(t, ThetaPowerTCP, "theta_rtt.csv")
	if s := res.Steps[4]; s.SignalPPM != 1280000 {
		t.Errorf("power after 50->60 us: %d ppm, want 1280000", s.SignalPPM)
	}
	if s := res.Steps[5]; s.SignalPPM != 1584000 {
		t.Errorf("power after 60->70 us: %d ppm, want 1584000", s.SignalPPM)
	}
}

// theta-PowerTCP as the reproduction suite's star runs it: tau = 300 us,
// HostBw = 100 Mbit/s = 12.5e6 B/s, so cwnd_init = HostBw*tau = 3750 B and
// beta = 3750 / N(100) = 37 B. Row 1 (RTT 10 ms) is the first sample: hold.
// Row 2, dt = 2.7 ms, RTT 300 us: theta_dot + 1 = (300 - 10000 + 2700) /
// 2700 < 0, floored at 0, so normPower = 0; dt >= tau, so the smoothed
// power is that sample alone: 0. snd_una (2896) has reached lastUpdated
// (0): updateWindow divides by the power floor 0.01:
// cwnd = 0.9 * (3750 / 0.01 + 37) + 0.1 * 3750 = 337533.3 + 375 = 337908
// (90 times HostBw*tau) under the 16 MiB default cap; with
// max_cwnd_bytes=0 (the line-rate window, as PowerTCP's default) 3750.
// Pacing min(cwnd / tau, HostBw) = 12.5e6 B/s either way.
func TestHandThetaPowerTCPFloorSample(t *testing.T) {
	kv := []string{"base_rtt_ns=300000", "host_bw_mbps=100"}
	res := replayFile(t, ThetaPowerTCP, "theta_floor.csv", kv...)
	wantStep(t, res.Steps[1], 3750, 1000000, TrHold)
	wantStep(t, res.Steps[2], 337908, 0, TrIncrease)
	res = replayFile(t, ThetaPowerTCP, "theta_floor.csv", append(kv, "max_cwnd_bytes=0")...)
	wantStep(t, res.Steps[2], 3750, 0, TrClampMax)
	for _, s := range res.Steps {
		if s.PacingRate != 12500000 {
			t.Errorf("line %d: pacing %d B/s, want 12500000", s.Line, s.PacingRate)
		}
	}
}

// HPCC, T = 50 us, two hops, row 2 is 10 us after row 1:
//
//	hop 1, 1 Gbit/s: B*T = 6250 B, min(qlen) = min(3000, 2500) = 2500,
//	  txRate = 625 B / 10 us = 62.5e6 B/s = 0.5 B: u = 0.4 + 0.5 = 0.9
//	hop 2, 10 Gbit/s: B*T = 62500 B, min(qlen) = 12500,
//	  txRate = 11250 B / 10 us = 1.125e9 B/s = 0.9 B: u = 0.2 + 0.9 = 1.1
//
// max u = 1.1 with tau = 10 us: U = (1 - 10/50) * 0 + 10/50 * 1.1 = 0.22.
// U < eta and incStage 0 < maxStage: AI, W = Wc + W_AI with
// W_init = 6250 B, W_AI = 6250 * (1 - 0.95) / 100 = 3.125 -> 3: W = 6253.
func TestHandHPCCTwoHopU(t *testing.T) {
	res := replayFile(t, HPCC, "hpcc_2hop.csv", bigCap)
	wantStep(t, res.Steps[1], 6250, 0, TrHold|TrINTPath)
	wantStep(t, res.Steps[2], 6253, 220000, TrAI|TrRTT)
}

// Swift with the fast-convergence paper's 5 us base target, FBS off, one
// hop: target = 5 us + 1 * 2 us = 7 us; delay 14 us =
// 2 * target: mdf = max(1 - 0.8 * (14 - 7) / 14, 0.5) = 1 - 0.4 = 0.6,
// cwnd = 6250 * 0.6 = 3750; signal delay/target = 2. The next 14 us sample
// 10 us later is within one RTT of the decrease: no second cut. Below
// target (6 us): cwnd += ai * acked / cwnd = 1448 * 1448 / 3750 = 559.
func TestHandSwiftMDFAtTwiceTarget(t *testing.T) {
	res := replayFile(t, Swift, "swift_delay.csv", "fs_range_ns=0", "base_target_ns=5000")
	wantStep(t, res.Steps[1], 3750, 2000000, TrDecrease)
	wantStep(t, res.Steps[2], 3750, 2000000, 0)
	wantStep(t, res.Steps[3], 3750+559, 857142, TrIncrease)
}

// Swift's topology-based scaling: an echo with 3 hops makes the target
// 5 + 3 * 2 = 11 us; delay 22 us = 2 * target: again mdf 0.6.
// Flow-based scaling: a window (100 B) below fs_min_cwnd (0.1 segment =
// 144.8 B) gets the whole fs_range (25 us): target 5 + 2 + 25 = 32 us, so
// delay 64 us gives mdf 0.6: 100 * 0.6 = 60 B, below one segment: paced
// at 60 B / 64 us = 937500 B/s, cwnd_segs 1.
func TestHandSwiftScaling(t *testing.T) {
	hop := TraceHop{RateMbps: 1000}
	ev := []Event{{TimeNs: 10000, Acked: 1448, RTTus: 22, Hops: []TraceHop{hop, hop, hop}}}
	res := replayEvents(t, Swift, ev, "fs_range_ns=0", "base_target_ns=5000")
	wantStep(t, res.Steps[1], 3750, 2000000, TrDecrease)

	ev = []Event{{TimeNs: 10000, Acked: 1448, RTTus: 64}}
	res = replayEvents(t, Swift, ev, "init_cwnd_bytes=100", "base_target_ns=5000")
	wantStep(t, res.Steps[1], 60, 2000000, TrDecrease)
	if s := res.Steps[1]; s.PacingRate != 937500 || s.CwndSegs != 1 {
		t.Errorf("fractional window: pacing %d B/s segs %d, want 937500 and 1", s.PacingRate, s.CwndSegs)
	}
}

// DCTCP, alpha_0 = 1, g = 1/16. Row 1 ends window 1 (no marks):
// alpha = 15/16 * 1 + 0 = 0.9375; slow start: 14480 + 1448 = 15928.
// Row 2 carries ECE: cwnd = 15928 * (1 - 0.9375 / 2) = 8461.75 -> 8461.
// Row 3 ends window 2: F = (2896 + 3620) / (5792 + 7240) = 0.5,
// alpha = 0.9375 - 0.9375/16 + 0.5/16 = 937500 - 58593 + 31250 = 910157 ppm
// (58593 = 937500 >> 4, integer); still in the cut's window: no new cut.
func TestHandDCTCPAlpha(t *testing.T) {
	res := replayFile(t, DCTCP, "dctcp_marks.csv")
	wantStep(t, res.Steps[1], 15928, 937500, TrRTT|TrIncrease)
	wantStep(t, res.Steps[2], 8461, 937500, TrDecrease|TrECE)
	wantStep(t, res.Steps[3], 8461, 910157, TrRTT|TrECE)
}

// DCTCP grows only while its window limits sending, as the kernel's Reno:
// in slow start 14480 + 1448 = 15928, then an ACK on which TCP small
// queues, not the window, held the socket back leaves it there (hold),
// and the next, window-limited, grows it again.
func TestHandDCTCPHoldsAnUnusedWindow(t *testing.T) {
	ev := []Event{
		{TimeNs: 10000, Acked: 1448},
		{TimeNs: 20000, Acked: 1448, NotCwndLimited: true},
		{TimeNs: 30000, Acked: 1448},
	}
	res := replayEvents(t, DCTCP, ev)
	wantStep(t, res.Steps[1], 15928, 937500, TrRTT|TrIncrease)
	wantStep(t, res.Steps[2], 15928, 937500, TrHold)
	wantStep(t, res.Steps[3], 17376, 937500, TrIncrease)
}

// VAI on HPCC: one hop at 100 Gbit/s (B*T = 625000 B) with a 51200 B
// queue and no transmission: u = 51200 / 625000 = 0.08192, U = 0.2 * u =
// 16384 ppm < eta: an AI step. The RTT ends on this ACK with the queue
// (51200) above Token_Thresh (10240): bank += 51200 / 1024 = 50 tokens,
// dampener += 51200 / 10240 = 5. Spent now: min(AI_Cap 100, 50) = 50,
// divided by dampener/8 + 1: 50 * 8 / (5 + 8) = 30 tokens: W_AI = 30 * 3 =
// 90 and W = 6250 + 90 = 6340 (3 without VAI: 6253). The next RTT's step
// finds the bank empty: one token.
func TestHandVAITokens(t *testing.T) {
	hop := func(ts uint64) []TraceHop {
		return []TraceHop{{Qlen: 51200, TxBytes: 0, TsNs: ts, RateMbps: 100000}}
	}
	ev := []Event{
		{TimeNs: 10000, Acked: 1448, Hops: hop(10000)},
		{TimeNs: 20000, Acked: 1448, Hops: hop(20000)},
	}
	res := replayEvents(t, HPCC, ev, bigCap, "vai_enable=1", "vai_token_thresh=10240")
	wantStep(t, res.Steps[2], 6340, 16384, TrAI|TrVAI|TrRTT)
	res = replayEvents(t, HPCC, ev, bigCap)
	wantStep(t, res.Steps[2], 6253, 16384, TrAI|TrRTT)
	if res.Steps[2].Trace.Has(TrVAI) {
		t.Errorf("VAI off by default, trace says %s", res.Steps[2].Trace)
	}
}

// Swift's flow-based scaling inside its range, window 1 segment (1448 B):
// fbs = fs_range * (1/sqrt(1) - 1/sqrt(100)) / (1/sqrt(0.1) - 1/sqrt(100)),
// which is 25 us * 0.9 / (3.16228 - 0.1) = 7.347 us exactly; in integers
// 1/sqrt(0.1) is 1e9 / isqrt(100000) = 1e9 / 316 = 3164556 ppm, so
// 25000 * 900000 / (3164556 - 100000) = 22500000000 / 3064556 = 7342 ns.
// Target 5 + 2 + 7.342 = 14.342 us; a 10 us delay is below it: signal
// 10000 / 14342 = 0.697252 -> 697252 ppm.
func TestHandSwiftFlowScalingInRange(t *testing.T) {
	ev := []Event{{TimeNs: 10000, Acked: 1448, RTTus: 10}}
	res := replayEvents(t, Swift, ev, "init_cwnd_bytes=1448", "base_target_ns=5000")
	if s := res.Steps[1]; s.SignalPPM != 697252 || !s.Trace.Has(TrIncrease) {
		t.Errorf("delay/target %d ppm trace %s, want 697252 and an increase", s.SignalPPM, s.Trace)
	}
}

// Swift's target counts the flow's own hops: with per_hop 10 us and 5
// hops by parameter, a flow told its path has 1 switch aims at 5 + 10 =
// 15 us (FBS off) instead of 55 us, so a 30 us delay is above its target
// (signal 30/15 = 2.0) and below the parameter's (30/55 = 0.545454); an
// INT echo's record count overrides both.
func TestHandSwiftPathHops(t *testing.T) {
	p := paramsWith(t, Swift, "base_target_ns=5000", "per_hop_ns=10000", "hops=5", "fs_range_ns=0")
	for _, c := range []struct {
		name   string
		path   uint32
		echo   int
		signal uint64
	}{
		{"parameter", 0, 0, 545454},
		{"path", 1, 0, 2000000},
		{"echo over path", 1, 3, 857142}, // 30 / (5 + 30)
	} {
		ctl, _, err := NewController(p, 0, 1448)
		if err != nil {
			t.Fatal(err)
		}
		ctl.SetPathHops(c.path)
		a := Ack{NowNs: 10000, AckedBytes: 1448, MSS: 1448, SndUna: 1448, SndNxt: 14480, RTTus: 30}
		if c.echo > 0 {
			a.Echo = &Echo{Hops: make([]Hop, c.echo)}
			for i := range a.Echo.Hops {
				a.Echo.Hops[i] = Hop{Ts: 10000, RateMbps: 100000}
			}
		}
		out, err := ctl.OnAck(a)
		if err != nil {
			t.Fatal(err)
		}
		if out.SignalPPM != c.signal {
			t.Errorf("%s: delay/target %d ppm, want %d", c.name, out.SignalPPM, c.signal)
		}
	}
}

// Swift with Sampling Frequency every 3 ACKs, delay 2 * target on every
// ACK (mdf 0.6 as above): each ACK's window is reference * 0.6 without
// compounding, and the reference is committed every third ACK:
// 6250 -> 3750, 3750, 3750 (commit) -> 2250, 2250, 2250 (commit) -> 1350.
func TestHandSwiftSamplingFrequency(t *testing.T) {
	var ev []Event
	for i := 1; i <= 7; i++ {
		ev = append(ev, Event{TimeNs: uint64(i) * 1000, Acked: 1448, RTTus: 14})
	}
	res := replayEvents(t, Swift, ev, "fs_range_ns=0", "base_target_ns=5000", "vai_sf_acks=3")
	want := []uint64{3750, 3750, 3750, 2250, 2250, 2250, 1350}
	for i, w := range want {
		s := res.Steps[i+1]
		if s.CwndBytes != w || s.Trace.Has(TrSF) != (i%3 == 2) {
			t.Errorf("ACK %d: cwnd %d trace %s, want %d (SF point: %v)", i+1, s.CwndBytes, s.Trace, w, i%3 == 2)
		}
	}
}

// QCN's reaction point on testdata/qcn_feedback.csv (the numbers are
// worked out in its comments): a feedback cuts by Gd*|Fb|, fast recovery
// halves the way back to TR on the timer's and the byte counter's first
// cycles, and an echo carrying the same record is no feedback.
func TestHandQCNTrace(t *testing.T) {
	res := replayFile(t, QCN, "qcn_feedback.csv")
	want := []struct {
		pacing, signal uint64
		flags          Trace
	}{
		{125000000, 0, TrInit},
		{125000000, 0, TrHold},
		{93750000, 32 * 1000000 / 63, TrECE | TrRTT | TrDecrease},
		{93750000, 32 * 1000000 / 63, TrHold},
		{109375000, 32 * 1000000 / 63, TrIncrease},
		{117187500, 32 * 1000000 / 63, TrIncrease},
		{59509278, 1000000, TrECE | TrRTT | TrDecrease},
		{59509278, 1000000, TrHold},
	}
	if len(res.Steps) != len(want) {
		t.Fatalf("%d steps, want %d", len(res.Steps), len(want))
	}
	for i, w := range want {
		s := res.Steps[i]
		if s.PacingRate != w.pacing || s.SignalPPM != w.signal || s.Trace != w.flags || s.CwndBytes != 16<<20 {
			t.Errorf("line %d: pacing %d signal %d trace %s cwnd %d; want %d, %d, %s, the cap",
				s.Line, s.PacingRate, s.SignalPPM, s.Trace, s.CwndBytes, w.pacing, w.signal, w.flags)
		}
	}
}
