package law

import (
	"testing"
)

// hopRow is one ACK's view of a single-hop path: queue and the share of
// the port rate sent since the previous row.
type hopRow struct {
	q       uint64 // bytes queued
	utilPPM uint64 // txRate / B, ppm
}

// oneHop builds events every dtNs on a path of one port at rateMbps,
// starting at time dtNs, each acking one segment with an RTT of rttUs.
func oneHop(rateMbps uint32, dtNs uint64, rttUs uint32, rows []hopRow) []Event {
	var ev []Event
	var tx uint64
	bytesPerDt := uint64(rateMbps) * 125000 * dtNs / 1e9
	for i, r := range rows {
		t := uint64(i+1) * dtNs
		tx += bytesPerDt * r.utilPPM / 1e6
		ev = append(ev, Event{Line: i + 1, TimeNs: t, Acked: 1448, RTTus: rttUs,
			Hops: []TraceHop{{Qlen: r.q, TxBytes: tx, TsNs: t, RateMbps: rateMbps}}})
	}
	return ev
}

func repeat(n int, r hopRow) []hopRow {
	out := make([]hopRow, n)
	for i := range out {
		out[i] = r
	}
	return out
}

func minCwnd(steps []Step) uint64 {
	m := steps[0].CwndBytes
	for _, s := range steps {
		m = min(m, s.CwndBytes)
	}
	return m
}

// A queue appearing shrinks the window; once it drains and the port runs
// below line rate, the window grows back. Both telemetry laws.
func TestBehaviourQueueShrinksDrainGrows(t *testing.T) {
	const bdp = 6250 // 1 Gbit/s * 50 us
	var rows []hopRow
	rows = append(rows, repeat(30, hopRow{0, 1e6})...)
	for i := 1; i <= 30; i++ {
		rows = append(rows, hopRow{uint64(i) * bdp / 10, 1e6}) // up to 3 BDP
	}
	rows = append(rows, repeat(200, hopRow{0, 5e5})...)
	ev := oneHop(1000, 10000, 50, rows)
	for _, l := range []Law{PowerTCP, HPCC} {
		res := replayEvents(t, l, ev)
		steps := res.Steps[1:]
		calm, congested := steps[29].CwndBytes, minCwnd(steps[30:60])
		end := steps[len(steps)-1].CwndBytes
		if congested >= calm {
			t.Errorf("%s: window %d under a 3-BDP queue, not below %d before it", l, congested, calm)
		}
		if end < congested*3/2 {
			t.Errorf("%s: window %d after the queue drained, want it grown back from %d", l, end, congested)
		}
	}
}

// Missing, stale, repeated and path-changed telemetry holds the window
// exactly and says why; usable telemetry afterwards resumes the law.
func TestBehaviourHoldOnBadTelemetry(t *testing.T) {
	base := oneHop(1000, 10000, 50, repeat(10, hopRow{3000, 1e6}))
	good := base[len(base)-1] // the path's state, advanced by every row
	var emitted Event
	next := func(dt uint64, mutate func(e *Event)) Event {
		good.TimeNs += dt
		good.Hops = append([]TraceHop(nil), good.Hops...)
		for i := range good.Hops {
			good.Hops[i].TsNs += dt
			good.Hops[i].TxBytes += 1250 * dt / 10000
		}
		e := good
		e.Hops = append([]TraceHop(nil), good.Hops...)
		if mutate != nil {
			mutate(&e)
		}
		emitted = e
		return e
	}
	seq := uint32(500)
	cases := []struct {
		name   string
		ev     Event
		reason Trace
	}{
		{"no echo", next(10000, func(e *Event) { e.Hops = nil }), TrNoINT},
		{"stale echo", next(2000000, func(e *Event) { e.EchoAgeNs = 2000000 }), TrINTStale},
		{"fresh again", next(10000, func(e *Event) { s := seq; e.EchoSeq = &s }), 0},
		{"same echo", next(10000, func(e *Event) { s := seq; e.EchoSeq = &s; e.Hops = emitted.Hops }), TrINTSame},
		{"path change: 2 hops", next(10000, func(e *Event) {
			e.Hops = append(e.Hops, TraceHop{Qlen: 0, TxBytes: 0, TsNs: e.TimeNs, RateMbps: 10000})
		}), TrINTPath},
		{"path change: rate", next(10000, func(e *Event) { e.Hops[0].RateMbps = 10000 }), TrINTPath},
		{"bad rate", next(10000, func(e *Event) { e.Hops[0].RateMbps = 0 }), TrINTBad},
		{"back to the first path", next(10000, nil), TrINTPath},
		{"law runs again", next(10000, nil), 0},
		{"tx counter jump", next(10000, func(e *Event) { e.Hops[0].TxBytes += 10 << 20 }), TrINTBad},
		{"echo gap beyond the ts half wrap", next(40000000, nil), TrINTBad},
		{"law runs after the restart", next(10000, nil), 0},
	}
	for _, l := range []Law{PowerTCP, HPCC} {
		ev := append([]Event(nil), base...)
		for _, c := range cases {
			ev = append(ev, c.ev)
		}
		res := replayEvents(t, l, ev)
		steps := res.Steps[len(base)+1:]
		prev := res.Steps[len(base)].CwndBytes
		for i, c := range cases {
			s := steps[i]
			if c.reason == 0 {
				if s.Trace.Has(TrHold) {
					t.Errorf("%s %s: held (%s), want the law to run", l, c.name, s.Trace)
				}
			} else if !s.Trace.Has(TrHold|c.reason) || s.CwndBytes != prev {
				t.Errorf("%s %s: cwnd %d -> %d trace %s, want held with %s", l, c.name, prev, s.CwndBytes, s.Trace, c.reason)
			}
			prev = s.CwndBytes
		}
	}
}

// An idle path drives the window to the cap, a huge queue to one segment;
// neither is ever passed.
func TestBehaviourWindowLimits(t *testing.T) {
	const capBytes = 100000
	idle := oneHop(1000, 10000, 50, repeat(200, hopRow{0, 0}))
	flood := oneHop(1000, 10000, 50, repeat(200, hopRow{4 << 20, 1e6}))
	for _, l := range []Law{PowerTCP, HPCC} {
		res := replayEvents(t, l, idle, "max_cwnd_bytes=100000")
		var hit bool
		for _, s := range res.Steps {
			if s.CwndBytes > capBytes {
				t.Fatalf("%s: cwnd %d above the cap %d", l, s.CwndBytes, capBytes)
			}
			hit = hit || s.Trace.Has(TrClampMax)
		}
		if !hit || res.Steps[len(res.Steps)-1].CwndBytes != capBytes {
			t.Errorf("%s: idle path never reached the cap (last %d)", l, res.Steps[len(res.Steps)-1].CwndBytes)
		}
		res = replayEvents(t, l, flood)
		hit = false
		for _, s := range res.Steps {
			if s.CwndBytes < DefaultMSS || s.CwndSegs < 1 {
				t.Fatalf("%s: cwnd %d (%d segs) below one segment", l, s.CwndBytes, s.CwndSegs)
			}
			hit = hit || s.Trace.Has(TrClampMin)
		}
		if !hit || res.Steps[len(res.Steps)-1].CwndBytes != DefaultMSS {
			t.Errorf("%s: a 4 MiB queue did not bring the window to one segment (last %d)", l, res.Steps[len(res.Steps)-1].CwndBytes)
		}
	}
}

// Swift: delay above target shrinks the window, into fractions of a
// segment enforced by pacing but never below min_cwnd_bytes; below target
// it grows; without an RTT sample it holds.
func TestBehaviourSwift(t *testing.T) {
	var ev []Event
	for i := 0; i < 100; i++ {
		ev = append(ev, Event{TimeNs: uint64(i+1) * 100000, Acked: 1448, RTTus: 500})
	}
	n := len(ev)
	for i := 0; i < 100; i++ {
		ev = append(ev, Event{TimeNs: uint64(n+i+1) * 100000, Acked: 1448, RTTus: 3})
	}
	ev = append(ev, Event{TimeNs: uint64(2*n+1) * 100000, Acked: 1448})
	res := replayEvents(t, Swift, ev, "min_cwnd_bytes=100")
	low := res.Steps[n]
	if low.CwndBytes != 100 || low.CwndSegs != 1 || low.PacingRate == PacingNone {
		t.Errorf("after 100 delays of 500 us: cwnd %d segs %d pacing %d; want 100 B, 1 seg, paced", low.CwndBytes, low.CwndSegs, low.PacingRate)
	}
	// 100 B over a 500 us delay: 200000 B/s.
	if low.PacingRate != 200000 {
		t.Errorf("fractional pacing %d B/s, want 200000", low.PacingRate)
	}
	end := res.Steps[2*n]
	if end.CwndBytes <= 10*low.CwndBytes || end.PacingRate != PacingNone {
		t.Errorf("below target: cwnd %d pacing %d; want grown past one segment, unpaced", end.CwndBytes, end.PacingRate)
	}
	hold := res.Steps[2*n+1]
	if !hold.Trace.Has(TrHold|TrNoRTT) || hold.CwndBytes != end.CwndBytes {
		t.Errorf("no RTT: %d trace %s, want held at %d", hold.CwndBytes, hold.Trace, end.CwndBytes)
	}
}

// Swift with pace_always paces every window at cwnd / base RTT, never
// above HostBw, and still paces a fractional window at cwnd / RTT.
func TestBehaviourSwiftPaceAlways(t *testing.T) {
	var ev []Event
	for i := 0; i < 50; i++ {
		ev = append(ev, Event{TimeNs: uint64(i+1) * 100000, Acked: 1448, RTTus: 3})
	}
	// HostBw 10 Gbit/s, base RTT 100 us: a BDP of 125 KB.
	params := []string{"pace_always=1", "base_rtt_ns=100000", "host_bw_mbps=10000", "init_cwnd_bytes=14480"}
	res := replayEvents(t, Swift, ev, params...)
	for i, s := range res.Steps {
		want := uint64(s.CwndBytes) * 1_000_000_000 / 100_000
		if s.PacingRate == PacingNone || s.PacingRate < want*99/100 || s.PacingRate > want*101/100 {
			t.Fatalf("step %d: cwnd %d pacing %d B/s, want %d (cwnd / 100 us)", i, s.CwndBytes, s.PacingRate, want)
		}
	}
	if last := res.Steps[len(res.Steps)-1]; last.CwndBytes <= 14480 {
		t.Errorf("below target the window did not grow: %d", last.CwndBytes)
	}
	big := replayEvents(t, Swift, ev[:1], "pace_always=1", "base_rtt_ns=100000", "host_bw_mbps=10000", "init_cwnd_bytes=250000")
	if p := big.Steps[0].PacingRate; p != 10000e6/8 {
		t.Errorf("a window of two BDPs: pacing %d B/s, want HostBw %d", p, uint64(10000e6/8))
	}
	off := replayEvents(t, Swift, ev, params[1:]...)
	if p := off.Steps[len(off.Steps)-1].PacingRate; p != PacingNone {
		t.Errorf("pace_always=0: pacing %d B/s above one segment, want unpaced", p)
	}
}

// theta-PowerTCP: a rising RTT shrinks the window, the base RTT lets it
// grow back.
func TestBehaviourThetaPowerTCP(t *testing.T) {
	var ev []Event
	rtt := func(i int) uint32 {
		switch {
		case i < 20:
			return 50
		case i < 60:
			return uint32(50 + (i-20)*5) // to 250 us
		case i < 80:
			return 250
		default:
			return 50
		}
	}
	for i := 0; i < 400; i++ {
		ev = append(ev, Event{TimeNs: uint64(i+1) * 10000, Acked: 1448, RTTus: rtt(i)})
	}
	res := replayEvents(t, ThetaPowerTCP, ev)
	calm := res.Steps[20].CwndBytes
	congested := minCwnd(res.Steps[21:81])
	end := res.Steps[len(res.Steps)-1].CwndBytes
	if congested >= calm || end < 2*congested {
		t.Errorf("cwnd calm %d, congested min %d, end %d: want a dip and a recovery", calm, congested, end)
	}
}

// DCTCP: marks cut the window once per window of data, down to one
// segment and not below; unmarked ACKs grow it.
func TestBehaviourDCTCP(t *testing.T) {
	var ev []Event
	una := uint32(0)
	for i := 0; i < 200; i++ {
		una += 1448
		ece := uint32(1448)
		if i >= 100 {
			ece = 0
		}
		nxt := una + 2*1448
		ev = append(ev, Event{TimeNs: uint64(i+1) * 10000, Acked: 1448, ECEBytes: ece, SndUna: &una, SndNxt: &nxt})
		u, n := una, nxt
		ev[len(ev)-1].SndUna, ev[len(ev)-1].SndNxt = &u, &n
	}
	res := replayEvents(t, DCTCP, ev)
	marked := res.Steps[100]
	if marked.CwndBytes != DefaultMSS || marked.SignalPPM < 990000 {
		t.Errorf("after 100 marked ACKs: cwnd %d alpha %d ppm; want one segment, alpha near 1", marked.CwndBytes, marked.SignalPPM)
	}
	for _, s := range res.Steps {
		if s.CwndBytes < DefaultMSS {
			t.Fatalf("cwnd %d below one segment", s.CwndBytes)
		}
	}
	end := res.Steps[len(res.Steps)-1]
	if end.CwndBytes <= 4*DefaultMSS || end.SignalPPM >= marked.SignalPPM {
		t.Errorf("after 100 unmarked ACKs: cwnd %d alpha %d; want growth and a falling alpha", end.CwndBytes, end.SignalPPM)
	}
}

// DCTCP's congestion avoidance is Reno's: one segment per window of
// acknowledged data. One mark (alpha_0 = 1) halves 10 segments to 5 and
// sets ssthresh there; then 100 unmarked segments are acknowledged one
// per ACK. Growing one segment per window, the window takes 5, 6, ... 14
// segments (95 in all) to reach 15 segments and is 5 segments into the
// 15th: 15 * 1448 = 21720 bytes, the continuous form sqrt(7240^2 + 2 *
// 1448 * 144800) = 21719 the same. Within 1 %.
func TestBehaviourDCTCPCongestionAvoidance(t *testing.T) {
	var ev []Event
	for i := 0; i <= 100; i++ {
		una := uint32(i+1) * 1448
		e := Event{TimeNs: uint64(i+1) * 10000, Acked: 1448, SndUna: &una, SndNxt: &una}
		if i == 0 {
			e.ECEBytes = 1448
		}
		ev = append(ev, e)
	}
	res := replayEvents(t, DCTCP, ev)
	if cut := res.Steps[1].CwndBytes; cut != 7240 {
		t.Fatalf("after the mark: cwnd %d, want 7240 (10 segments halved)", cut)
	}
	end := res.Steps[len(res.Steps)-1].CwndBytes
	if end < 21500 || end > 21940 {
		t.Errorf("after 100 segments in congestion avoidance: cwnd %d, want ~21720 (one segment per window)", end)
	}
	t.Logf("cwnd after the cut 7240, after 100 segments %d", end)
}

// Sampling Frequency: under persistent congestion within one RTT, plain
// HPCC keeps W at Wc / (U / eta) (the reference window only moves once per
// RTT) while SF moves the reference every sf_acks ACKs: lower windows.
func TestBehaviourHPCCSamplingFrequency(t *testing.T) {
	ev := oneHop(1000, 1000, 50, repeat(40, hopRow{12500, 1e6}))
	// One RTT covers the whole trace: snd_nxt far ahead.
	for i := range ev {
		una, nxt := uint32(1448*(i+1)), uint32(1<<30)
		ev[i].SndUna, ev[i].SndNxt = &una, &nxt
	}
	plain := replayEvents(t, HPCC, ev)
	sf := replayEvents(t, HPCC, ev, "vai_sf_acks=5")
	var sfPoints int
	for _, s := range sf.Steps {
		if s.Trace.Has(TrSF) {
			sfPoints++
		}
	}
	last := len(ev)
	if sfPoints < 5 {
		t.Errorf("SF decrease points %d in 40 congested ACKs, want about 8", sfPoints)
	}
	if sf.Steps[last].CwndBytes >= plain.Steps[last].CwndBytes {
		t.Errorf("SF window %d, plain %d: want SF lower under persistent congestion", sf.Steps[last].CwndBytes, plain.Steps[last].CwndBytes)
	}
}

// On a 100 Gbit/s port txBytes wraps every 2.7 ms: echoes 2 ms apart
// cannot be paired (the delta is ambiguous), 1 ms apart they can.
func TestBehaviourTxWrapGap(t *testing.T) {
	mk := func(gapNs uint64) []Event {
		h := func(t, tx uint64) []TraceHop { return []TraceHop{{Qlen: 0, TxBytes: tx, TsNs: t, RateMbps: 100000}} }
		return []Event{
			{TimeNs: 10000, Acked: 1448, Hops: h(10000, 0)},
			{TimeNs: 10000 + gapNs, Acked: 1448, Hops: h(10000+gapNs, gapNs*12500/1000)},
		}
	}
	for _, l := range []Law{PowerTCP, HPCC} {
		if s := replayEvents(t, l, mk(2000000)).Steps[2]; !s.Trace.Has(TrHold | TrINTBad) {
			t.Errorf("%s: 2 ms gap on 100 Gbit/s: trace %s, want hold|int_bad", l, s.Trace)
		}
		if s := replayEvents(t, l, mk(1000000)).Steps[2]; s.Trace.Has(TrHold) {
			t.Errorf("%s: 1 ms gap on 100 Gbit/s: held (%s)", l, s.Trace)
		}
	}
}

// PowerTCP with echoes spaced wider than tau (every sample replaces the
// smoothed power): one sample over an idle gap reads a power near 0. By
// default the window stays within the line-rate window HostBw*tau and the
// pacing rate within HostBw; with a 16 MiB cap the same sample multiplies
// the window tenfold or more (the overshoot seen over a real 100 Mbit/s
// bottleneck, kmod/law/README.md).
func TestBehaviourPowerTCPIdleGapBounded(t *testing.T) {
	const (
		rate   = 100    // Mbit/s
		tauNs  = 150000 // base RTT
		lineBp = 12500000
		bdp    = 1875 // HostBw * tau, bytes
	)
	rows := repeat(20, hopRow{0, 1e6})
	rows = append(rows, hopRow{0, 10000}) // 1 % of the line rate: an idle gap
	rows = append(rows, repeat(20, hopRow{0, 1e6})...)
	ev := oneHop(rate, 240000, 150, rows)
	kv := []string{"host_bw_mbps=100", "base_rtt_ns=150000"}

	res := replayEvents(t, PowerTCP, ev, kv...)
	for i, s := range res.Steps {
		if s.CwndBytes > bdp || s.PacingRate > lineBp {
			t.Fatalf("step %d: cwnd %d pacing %d B/s, want <= %d B and <= %d B/s", i, s.CwndBytes, s.PacingRate, bdp, lineBp)
		}
	}
	if s := res.Steps[21]; s.SignalPPM > 100000 {
		t.Errorf("idle-gap sample: power %d ppm, want near 0", s.SignalPPM)
	}

	res = replayEvents(t, PowerTCP, ev, append(kv, "max_cwnd_bytes=16777216")...)
	before, after := res.Steps[20].CwndBytes, res.Steps[21].CwndBytes
	if after < 10*before {
		t.Errorf("16 MiB cap: idle-gap sample took cwnd %d -> %d, want the unbounded jump the default cap prevents", before, after)
	}
	for i, s := range res.Steps {
		if s.PacingRate > lineBp {
			t.Fatalf("step %d: pacing %d B/s above HostBw", i, s.PacingRate)
		}
	}
}

// The rate laws' starting rate (init_rate_kbps): 0 starts at the line
// rate with no rate limiter (QCN and DCQCN wait for a first feedback);
// below the line, the flow starts there with its limiter running (TR =
// CR), so the timer's cycles raise it from the first ACK on without any
// feedback; out of [floor, line] it is clamped.
func TestBehaviourInitRate(t *testing.T) {
	const line = 125e6 // 1 Gbit/s in B/s
	for _, tc := range []struct {
		law     Law
		timerNs uint64 // the first timer cycle; 0: no timer (TIMELY)
	}{{QCN, 15e6}, {QCNT, 2.4e6}, {DCQCN, 55e3}, {Timely, 0}} {
		t.Run(tc.law.String(), func(t *testing.T) {
			_, out := newCtl(t, tc.law, "host_bw_mbps=1000")
			if out.PacingRate != line {
				t.Fatalf("default: starts at %d B/s, want the line %d", out.PacingRate, uint64(line))
			}
			c, out := newCtl(t, tc.law, "host_bw_mbps=1000", "init_rate_kbps=100000")
			if out.PacingRate != 12.5e6 {
				t.Fatalf("init 100 Mbit/s: starts at %d B/s, want 12500000", out.PacingRate)
			}
			if tc.timerNs == 0 {
				return
			}
			// no feedback, nothing acked: only the timer moves the rate
			t0 := uint64(1e9)
			onAck(t, c, Ack{NowNs: t0, MSS: DefaultMSS})
			before := onAck(t, c, Ack{NowNs: t0 + tc.timerNs - 1, MSS: DefaultMSS})
			if before.PacingRate != 12.5e6 {
				t.Fatalf("before the first timer cycle: %d B/s", before.PacingRate)
			}
			// fast recovery first (TR = CR: no change), then increases
			var o Out
			for k := uint64(1); k <= 40; k++ {
				o = onAck(t, c, Ack{NowNs: t0 + k*tc.timerNs, MSS: DefaultMSS})
			}
			if o.PacingRate <= 12.5e6 || o.PacingRate >= line {
				t.Errorf("after 40 timer cycles without feedback: %d B/s, want above the start and below the line", o.PacingRate)
			}
		})
	}
	// DCQCN started below the line: its first CNP cuts however soon it
	// comes, even within N of the clock's zero (N spaces CNPs, and there
	// was none).
	c, _ := newCtl(t, DCQCN, "host_bw_mbps=1000", "init_rate_kbps=100000", "cnp_ns=50000")
	onAck(t, c, Ack{NowNs: 1000, MSS: DefaultMSS})
	if o := onAck(t, c, Ack{NowNs: 2000, MSS: DefaultMSS, ECE: true}); o.PacingRate >= 12.5e6 {
		t.Errorf("DCQCN started at 100 Mbit/s: a CNP 1 us after the first ACK left %d B/s", o.PacingRate)
	}
	_, out := newCtl(t, QCN, "host_bw_mbps=1000", "init_rate_kbps=5000000")
	if out.PacingRate != line {
		t.Errorf("init above the line: %d B/s, want the line", out.PacingRate)
	}
	_, out = newCtl(t, QCN, "host_bw_mbps=1000", "min_rate_kbps=50000", "init_rate_kbps=1000")
	if out.PacingRate != 6.25e6 {
		t.Errorf("init below the floor: %d B/s, want the floor 6250000", out.PacingRate)
	}
}
