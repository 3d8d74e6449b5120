package law

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// Conformance of QCN's reaction point and QCN-T (qcn.h) with section II
// and section VI of the QCN convergence paper, written again here in
// float64 from kmod/law/README.md (the section "QCN and QCN-T" and its
// row of "Where the papers are silent"), with the defaults of
// law_table.h, and compared with the C core on every ACK of generated
// traces. As conform_rate_test.go does for DCQCN, the reference takes the
// core's integer CR after each ACK; TR is not an output, so the reference
// keeps its own, with a bound on how far the core's integers may be from
// it (trSlack).

// qcnRef is the reaction point of either law.
type qcnRef struct {
	timerOnly bool   // QCN-T: no byte counter, cycles never halved, H its own
	byteB     uint64 // bytes per byte-counter cycle, 0 = none (BC is T)
	timerT    uint64 // ns per timer cycle
	f, h      int    // F; hyper-active once min(BC, T) > H
	gdShift   int
	line      float64 // bytes/s
	floor     float64
	rai, rhai float64
	// how far the core's R_AI and R_HAI may be below rai and rhai: the
	// core keeps rates in whole bytes/s (HostBw/2000 is not always whole)
	raiErr, rhaiErr float64

	cr, tr           float64
	crSlack, trSlack float64
	started          bool
	timerNext        uint64 // ns
	bytes            uint64 // acked bytes counted towards the byte counter's cycle
	t, bc            int
	seen             uint32 // the echo's qcn_count at the last look
	fb               int    // the last feedback's |Fb|
	count            map[string]int
}

// cycle is a counter's next cycle after stage completed cycles: the base
// length while fewer than F are done, then half (whole units, rounded
// down); QCN-T's timer keeps t.
func (r *qcnRef) cycle(base uint64, stage int) uint64 {
	if r.timerOnly || stage < r.f {
		return base
	}
	return base / 2
}

// increase applies one increase event (T or BC already counts it).
func (r *qcnRef) increase(clock string) {
	t, bc := r.t, r.bc
	if r.byteB == 0 {
		bc = t
	}
	lo, hi := min(t, bc), max(t, bc)
	switch {
	case hi <= r.f:
		r.count["fast recovery"]++
	case lo > r.h:
		i := float64(lo - r.h)
		r.tr += i * r.rhai
		r.trSlack += i * r.rhaiErr
		r.count["hyper-active increase"]++
		if lo-r.h > 1 {
			r.count["hyper-active increase, i > 1"]++
		}
	default:
		r.tr += r.rai
		r.trSlack += r.raiErr
		r.count["active increase"]++
	}
	r.count["event of the "+clock]++
	if r.byteB > 0 && min(t, bc) != max(t, bc) {
		r.count["counters apart"]++
	}
	r.tr, r.trSlack = clampSlack(r.tr, r.trSlack, r.floor, r.line) // TR within [floor, line]
	if r.tr == r.line {
		r.count["TR at the line rate"]++
	}
	r.cr, r.crSlack = halfwaySlack(r.cr, r.crSlack, r.tr, r.trSlack)
}

// qcnEvents is the cap of increase events per ACK (README: "at most 16").
const qcnEvents = 16

// onAck steps the reference; it reports whether the ACK brought a
// feedback that the law takes (a cut).
func (r *qcnRef) onAck(a Ack) bool {
	now := a.NowNs
	r.crSlack = 0
	if r.started && r.timerNext == 0 { // started below the line: armed now
		r.timerNext = now + r.cycle(r.timerT, 0)
	}
	if r.started {
		n := 0
		// the timer's expiries due by now, in order: each cycle after
		// the one that just ended
		for ; r.timerNext <= now && n < qcnEvents; n++ {
			r.t++
			if r.t > r.f && !r.timerOnly {
				r.count["halved timer cycle"]++
			}
			r.timerNext += r.cycle(r.timerT, r.t)
			r.increase("timer")
		}
		if r.timerNext <= now { // over the cap: the timer restarts here
			r.timerNext = now + r.cycle(r.timerT, r.t)
			r.count["timer events over the cap"]++
		}
		if r.byteB > 0 {
			r.bytes += uint64(a.AckedBytes)
			for ; r.bytes >= r.cycle(r.byteB, r.bc) && n < qcnEvents; n++ {
				r.bytes -= r.cycle(r.byteB, r.bc)
				r.bc++
				if r.bc > r.f {
					r.count["halved byte cycle"]++
				}
				r.increase("byte counter")
			}
			if c := r.cycle(r.byteB, r.bc); r.bytes >= c {
				r.bytes %= c
				r.count["byte events over the cap"]++
			}
		}
	}
	e := a.Echo
	switch {
	case e == nil:
		r.count["no echo"]++
		return false
	case e.QCNCount == r.seen:
		r.count["echo, no new record"]++
		return false
	}
	r.seen = e.QCNCount
	fb := min(int(e.QCNFb), 63)
	if fb == 0 {
		r.count["record with |Fb| 0"]++
		return false
	}
	if e.QCNFb > 63 {
		r.count["record with |Fb| above 63"]++
	}
	r.count["feedback"]++
	r.fb = fb
	r.tr, r.trSlack = r.cr, r.crSlack
	r.cr = math.Max(r.cr*(1-float64(fb)*math.Ldexp(1, -r.gdShift)), r.floor)
	if r.cr == r.floor {
		r.count["cut to the floor"]++
	}
	r.crSlack += 1 // the decrease in whole bytes/s
	r.t, r.bc, r.bytes = 0, 0, 0
	r.timerNext = now + r.cycle(r.timerT, 0)
	r.started = true
	return true
}

// qcnTrace is one generated trace's parameters.
type qcnTrace struct {
	kv  []string
	ref *qcnRef
	cap uint64
}

// newQCNTrace draws the parameters of a trace of law l (QCN or QCN-T).
func newQCNTrace(rng *rand.Rand, l Law, count map[string]int) qcnTrace {
	mbps := uint64(logUniform(rng, 100, 100000))
	lineKbps := mbps * 1000
	r := &qcnRef{timerOnly: l == QCNT, f: 5, gdShift: 7, count: count}
	if l == QCN {
		r.timerT, r.byteB = 15000000, 150000
		if rng.Intn(3) != 0 {
			r.timerT = uint64(logUniform(rng, 1000, 50e6))
		}
		switch rng.Intn(4) {
		case 0:
			r.byteB = 0
		case 1, 2:
			r.byteB = uint64(logUniform(rng, 1000, 4<<20))
		}
	} else {
		r.timerT = 2400000
		if rng.Intn(3) != 0 {
			r.timerT = uint64(logUniform(rng, 1000, 50e6))
		}
	}
	r.f = []int{5, 0, rng.Intn(11)}[rng.Intn(3)]
	r.gdShift = []int{7, 6, 6 + rng.Intn(11)}[rng.Intn(3)]
	kv := []string{fmt.Sprintf("host_bw_mbps=%d", mbps), fmt.Sprintf("timer_ns=%d", r.timerT),
		fmt.Sprintf("fast_recovery=%d", r.f), fmt.Sprintf("gd_shift=%d", r.gdShift)}
	if l == QCN {
		kv = append(kv, fmt.Sprintf("byte_counter_bytes=%d", r.byteB))
		r.h = r.f
	} else {
		hai := 0
		if rng.Intn(2) == 0 {
			hai = rng.Intn(40)
		}
		kv = append(kv, fmt.Sprintf("hai_cycles=%d", hai))
		// README: H = hai_cycles, 0 = 75 ms / t rounded down; at least F
		r.h = hai
		if hai == 0 {
			r.h = int(75000000 / r.timerT)
		}
		r.h = max(r.h, r.f)
	}
	r.line = float64(mbps) * 125000
	r.floor = r.line / 100
	r.rai, r.raiErr = r.line/2000, 1
	var raiKbps, rhaiKbps, floorKbps uint64
	if rng.Intn(3) == 0 {
		raiKbps = 1 + uint64(rng.Int63n(int64(lineKbps/50)))
		r.rai, r.raiErr = float64(raiKbps)*125, 0
	}
	r.rhai, r.rhaiErr = 10*r.rai, 10*r.raiErr
	if rng.Intn(3) == 0 {
		rhaiKbps = 1 + uint64(rng.Int63n(int64(lineKbps/10)))
		r.rhai, r.rhaiErr = float64(rhaiKbps)*125, 0
	}
	if rng.Intn(3) == 0 {
		floorKbps = 1 + uint64(rng.Int63n(int64(lineKbps/2)))
		r.floor = float64(floorKbps) * 125
	}
	capBytes := uint64(16 << 20)
	if rng.Intn(2) == 0 {
		capBytes = 65535 + uint64(rng.Int63n(1<<30-65535+1))
	}
	// README: init_rate_kbps within [floor, line], 0 the line; below the
	// line the rate limiter runs from the start, its timer from the
	// first ACK.
	initKbps := randomInitKbps(rng, lineKbps)
	r.cr = startRate(initKbps, r.floor, r.line)
	r.tr, r.started = r.cr, r.cr < r.line
	if r.started {
		count["started below the line"]++
	}
	kv = append(kv, fmt.Sprintf("rai_kbps=%d", raiKbps), fmt.Sprintf("rhai_kbps=%d", rhaiKbps),
		fmt.Sprintf("min_rate_kbps=%d", floorKbps), fmt.Sprintf("max_cwnd_bytes=%d", capBytes),
		fmt.Sprintf("init_rate_kbps=%d", initKbps))
	return qcnTrace{kv, r, capBytes}
}

// testConformQCN drives law l and the reference through generated ACK
// streams: gaps from 0 to many timer cycles and idle gaps of thousands;
// random acked bytes, now and then megabytes (more byte-counter cycles
// than the event cap); feedback at random times, in congested stretches
// and sparse, with random |Fb| (now and then 0 or above 63), several
// records between two ACKs, echoes without a new record and ACKs without
// an echo; random F, Gd, R_AI, R_HAI, floor, cap, cycles and (QCN-T) H.
// Every ACK's CR (the pacing rate), window, signal and feedback flags
// agree within that step's rounding.
func testConformQCN(t *testing.T, l Law, seed int64, traces int) {
	rng := rand.New(rand.NewSource(seed))
	count := map[string]int{}
	var worst float64
	for trace := 0; trace < traces; trace++ {
		tr := newQCNTrace(rng, l, count)
		ref := tr.ref
		c, out := newCtl(t, l, tr.kv...)
		if out.PacingRate != uint64(ref.cr) || out.SignalPPM != 0 || out.CwndBytes != tr.cap {
			t.Fatalf("trace %d %v: init pacing %d signal %d cwnd %d; want the starting rate %.0f, 0, the cap %d",
				trace, tr.kv, out.PacingRate, out.SignalPPM, out.CwndBytes, ref.cr, tr.cap)
		}
		// the mean gap between ACKs: a small fraction of a cycle, or many
		scale := float64(ref.timerT)
		now := uint64(1e9)
		var una, qcnCount uint32
		var qcnFb uint8
		congested := false
		for i := 0; i < 500; i++ {
			switch k := rng.Intn(100); {
			case k < 5: // the same instant
			case k < 60:
				now += uint64(logUniform(rng, 100, math.Max(scale/4, 200)))
			case k < 85:
				now += uint64(rng.Int63n(int64(3*scale))) + 1
			case k < 97:
				now += uint64(3+rng.Intn(38)) * ref.timerT
			default: // idle
				now += uint64(logUniform(rng, 100, 10000)) * ref.timerT
			}
			if rng.Intn(15) == 0 {
				congested = !congested
			}
			a := Ack{NowNs: now, MSS: DefaultMSS, RTTus: uint32(rng.Intn(200))}
			a.AckedBytes = randomAcked(rng, 8<<20)
			una += a.AckedBytes
			a.SndUna, a.SndNxt = una, una+uint32(tr.cap)
			p := 0.02
			if congested {
				p = 0.3
			}
			if rng.Float64() < p { // new records since the last ACK
				qcnCount += 1 + uint32(rng.Intn(3)/2)
				switch k := rng.Intn(40); {
				case k == 0:
					qcnFb = 0
				case k == 1:
					qcnFb = uint8(64 + rng.Intn(192))
				case k < 10:
					qcnFb = 63
				default:
					qcnFb = uint8(1 + rng.Intn(63))
				}
			}
			if rng.Intn(4) != 0 || qcnCount != ref.seen {
				a.Echo = &Echo{ArrivedNs: now, Count: uint32(i), QCNCount: qcnCount, QCNKey: qcnCount, QCNFb: qcnFb}
				if rng.Intn(5) == 0 {
					a.Echo.Hops = []Hop{{Qlen: 3000, TxBytes: uint32(i) * 1000, Ts: uint32(now % TsWrap), RateMbps: 1000}}
				}
				if qcnCount != ref.seen && rng.Intn(8) == 0 {
					a.Echo = nil // the ACK with the record lost: the next one has it
				}
			}
			cr0 := out.PacingRate
			out = onAck(t, c, a)
			fb := ref.onAck(a)
			tol := ref.crSlack + 1e-6
			worst = math.Max(worst, math.Abs(float64(out.PacingRate)-ref.cr))
			sig := float64(ref.fb) / 63 * 1e6
			flags := out.Trace.Has(TrECE) && out.Trace.Has(TrRTT)
			moved := (out.PacingRate < cr0) == out.Trace.Has(TrDecrease) &&
				(out.PacingRate > cr0) == out.Trace.Has(TrIncrease) && (out.PacingRate == cr0) == out.Trace.Has(TrHold)
			if !near(float64(out.PacingRate), ref.cr, 0, tol) || out.CwndBytes != tr.cap ||
				!near(float64(out.SignalPPM), sig, 0, 1) || flags != fb || !moved {
				var echo string
				if a.Echo != nil {
					echo = fmt.Sprintf("qcn_count %d fb %d", a.Echo.QCNCount, a.Echo.QCNFb)
				}
				t.Fatalf("%s trace %d %v ACK %d at %d ns, acked %d, echo {%s}:\n"+
					"core: CR %d B/s, cwnd %d, signal %d ppm, trace %s (before: CR %d)\n"+
					"reference: CR %.1f±%.1f B/s, TR %.1f±%.1f, signal %.0f, cwnd %d; feedback %v, T %d, BC %d, bytes %d, timer next %d, H %d",
					l, trace, tr.kv, i, now, a.AckedBytes, echo,
					out.PacingRate, out.CwndBytes, out.SignalPPM, out.Trace, cr0,
					ref.cr, tol, ref.tr, ref.trSlack, sig, tr.cap, fb, ref.t, ref.bc, ref.bytes, ref.timerNext, ref.h)
			}
			ref.cr = float64(out.PacingRate) // follow the core's integer CR
		}
	}
	t.Logf("%s, %d traces: %v; largest CR difference %.1f B/s", l, traces, count, worst)
	kinds := []string{"feedback", "record with |Fb| 0", "record with |Fb| above 63", "cut to the floor",
		"echo, no new record", "no echo", "fast recovery", "active increase", "hyper-active increase",
		"hyper-active increase, i > 1", "TR at the line rate", "event of the timer", "timer events over the cap",
		"started below the line"}
	if l == QCN {
		kinds = append(kinds, "event of the byte counter", "byte events over the cap", "halved timer cycle",
			"halved byte cycle", "counters apart")
	}
	for _, k := range kinds {
		if count[k] < 20 {
			t.Errorf("only %d of %q: the traces do not exercise it", count[k], k)
		}
	}
}

func TestConformQCN(t *testing.T)  { testConformQCN(t, QCN, 31, 300) }
func TestConformQCNT(t *testing.T) { testConformQCN(t, QCNT, 32, 300) }

// TestQCNSchedule follows the defaults at 1 Gbit/s through the paper's
// schedule, read off the README by hand (R_AI = 0.5 Mbit/s = 62 500 B/s,
// R_HAI = 625 000 B/s). After a feedback with |Fb| 32, CR = 125 MB/s *
// (1 - 32/128) = 93.75 MB/s and TR = 125 MB/s; QCN's timer alone (nothing
// acked) gives fast recovery 15, 30, 45, 60 and 75 ms after it, then
// cycles of 7.5 ms of active increase (TR stays at the line rate). After a
// second feedback, 150 KB acked per ACK ends the byte counter's first
// five cycles, 75 KB its later ones; with BC past 5 and T not, active
// increase; once both are past 5, hyper-active with i = min(BC, T) - 5.
// QCN-T (two feedbacks, so that TR is below the line rate) keeps 2.4 ms
// cycles whatever is acked: fast recovery at cycles
// 1-5, active increase at 6-31 (H = 75 ms / 2.4 ms = 31), hyper-active
// from 32 with i = T - 31.
func TestQCNSchedule(t *testing.T) {
	const line, rai = 125e6, 62500.0
	var cr, tr float64
	step := func(inc float64) {
		tr = math.Min(tr+inc, line)
		cr = (cr + tr) / 2
	}
	feedback := func(c *Controller, now uint64, n uint32, fb uint8) Out {
		t.Helper()
		return onAck(t, c, Ack{NowNs: now, MSS: DefaultMSS, Echo: &Echo{ArrivedNs: now, QCNCount: n, QCNFb: fb}})
	}
	ack := func(c *Controller, now uint64, acked uint32) Out {
		t.Helper()
		return onAck(t, c, Ack{NowNs: now, MSS: DefaultMSS, AckedBytes: acked})
	}
	want := func(what string, o Out) {
		t.Helper()
		if math.Abs(float64(o.PacingRate)-cr) > 2 {
			t.Fatalf("%s: CR %d B/s, want %.1f (trace %s)", what, o.PacingRate, cr, o.Trace)
		}
	}

	// QCN, the timer alone
	c, out := newCtl(t, QCN)
	cr = line
	want("start", out)
	for i := 0; i < 3; i++ {
		out = ack(c, uint64(1+i)*1e6, 200000) // no counter runs before a feedback
	}
	want("before a feedback", out)
	t0 := uint64(1e9)
	out = feedback(c, t0, 1, 32)
	cr, tr = line*(1-32.0/128), line
	want("feedback |Fb| 32", out)
	if out.SignalPPM != 32*1000000/63 || !out.Trace.Has(TrECE|TrRTT|TrDecrease) {
		t.Fatalf("feedback: signal %d, trace %s", out.SignalPPM, out.Trace)
	}
	next := t0
	for k := 1; k <= 12; k++ {
		cycle := uint64(15e6)
		if k > 5 {
			cycle = 7.5e6
		}
		next += cycle
		want(fmt.Sprintf("just before timer cycle %d", k), ack(c, next-1, 0))
		if k <= 5 {
			step(0)
		} else {
			step(rai)
		}
		want(fmt.Sprintf("timer cycle %d", k), ack(c, next, 0))
	}
	// the same count again is no feedback; a new one restarts the cycles
	want("repeated record", feedback(c, next+1, 1, 63))
	t1 := next + 2
	out = feedback(c, t1, 2, 63)
	cr, tr = cr*(1-63.0/128), cr
	want("feedback |Fb| 63", out)
	for k := 1; k <= 5; k++ { // BC 1..5, T 0: fast recovery
		step(0)
		want(fmt.Sprintf("byte cycle %d", k), ack(c, t1+uint64(k)*1e6, 150000))
	}
	want("75 KB less one byte", ack(c, t1+6e6, 74999))
	step(rai) // BC 6, T 0: active
	want("byte cycle 6 (75 KB)", ack(c, t1+6e6+1, 1))
	for k := 1; k <= 5; k++ { // T 1..5, BC 6: active
		step(rai)
		want(fmt.Sprintf("timer cycle %d with BC 6", k), ack(c, t1+uint64(k)*15e6, 0))
	}
	step(10 * rai) // T 6 (7.5 ms later), BC 6: i = 1
	want("T 6, BC 6", ack(c, t1+82.5e6, 0))
	step(10 * rai) // BC 7, T 6: i = min(7, 6) - 5 = 1
	want("BC 7, T 6", ack(c, t1+82.5e6+1, 75000))
	step(20 * rai) // T 7, BC 7: i = 2
	want("T 7, BC 7", ack(c, t1+90e6, 0))
	step(20 * rai) // BC 8, T 7: i = 2
	want("BC 8, T 7", ack(c, t1+90e6+1, 75000))

	// QCN-T: 2.4 ms cycles throughout, whatever is acked
	c, _ = newCtl(t, QCNT)
	feedback(c, t0-1, 6, 1)
	out = feedback(c, t0, 7, 64) // above 63: counts as 63
	cr, tr = line*(1-1.0/128)*(1-63.0/128), line*(1-1.0/128)
	want("QCN-T feedback |Fb| 64", out)
	for k := 1; k <= 40; k++ {
		at := t0 + uint64(k)*2400000
		want(fmt.Sprintf("QCN-T just before cycle %d", k), ack(c, at-1, 1<<20))
		switch {
		case k <= 5:
			step(0)
		case k <= 31:
			step(rai)
		default:
			step(float64(k-31) * 10 * rai)
		}
		want(fmt.Sprintf("QCN-T cycle %d", k), ack(c, at, 1<<20))
	}
}
