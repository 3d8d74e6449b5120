package law

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// Conformance of the two rate-based baselines, TIMELY (timely.h) and
// DCQCN (dcqcn.h), to their papers: TIMELY's Algorithm 1 on completion
// events, DCQCN's notification point (both of its rules) and reaction
// point. Each is written again here in float64 from the papers' rules as
// kmod/law/README.md gives them (the sections "TIMELY" and "DCQCN", their
// rows of "Where the papers are silent" and "DCQCN and TIMELY: what still
// differs from the papers"), with the parameters and defaults of
// law_table.h, and compared with the C core on every ACK of generated
// traces: the pacing rate, the window (the cap only), the signal and the
// trace's update flags. As in conform_test.go the reference takes the
// core's integer rate (DCQCN: and alpha) after each step, so a step's
// tolerance is only that step's rounding. Where the README leaves a
// detail open the reference follows the code and the comment says so.

// logUniform is a number in [lo, hi], uniform on a log scale.
func logUniform(rng *rand.Rand, lo, hi float64) float64 {
	return lo * math.Exp(rng.Float64()*math.Log(hi/lo))
}

// timelyRef is TIMELY's Algorithm 1 in float64, on the paper's clock:
// the rate, the rtt_diff EWMA and the HAI count run once per completion
// event, a segment of seg bytes acknowledged (snd_una reaching the next
// multiple of seg from the first sequence number), with the RTT sample of
// the ACK that completes it; an ACK that passes several boundaries is one
// completion (README), one without a sample leaves its completion to the
// next ACK with one; seg 0 is the per-RTT clock of the HPCC and PowerTCP
// simulators (snd_una reaches the snd_nxt of the last update). HAI as
// the paper's Algorithm 1: N*delta when the gradient is negative at this
// completion and the N-1 before it. prev_rtt starts as the first sample
// (the authors' snippet, as eRPC carries it: a difference of 0), so the
// first completion runs the rules too. The rate within [floor, HostBw].
type timelyRef struct {
	minRTT, tLow, tHigh float64 // ns
	alphaPPM            uint64
	alpha, beta         float64
	haiN                int
	delta, floor, line  float64 // bytes/s
	rate                float64 // bytes/s
	rttDiff             float64 // ns
	prevRTT             float64 // ns, 0 = no sample yet
	seg                 uint32  // bytes per completion, 0 = per RTT
	next                uint32  // the next completion when snd_una reaches it
	// negLo..negHi: how many consecutive completions up to the last had
	// a negative gradient in the core (an interval: a sign within the
	// core's rounding of 0 may be either).
	negLo, negHi int
	// slack bounds |core's rtt_diff - rttDiff| in ns: the core keeps
	// rtt_diff in whole ns, flooring each of the EWMA's two products
	// (README: integers only), so each update can lose up to 1 ns per
	// inexact product; older losses decay with the EWMA.
	slack float64
	count map[string]int
}

// timelyStep is a rate the core may have after an ACK, within tol bytes/s.
type timelyStep struct {
	rate, tol float64
	what      string
}

func (r *timelyRef) clamp(x float64) float64 { return math.Min(math.Max(x, r.floor), r.line) }

// completes reports whether the ACK completes a segment (or, per RTT,
// reaches the update point), and moves the next completion past it.
func (r *timelyRef) completes(a Ack) bool {
	if a.RTTus == 0 || seqAfter(r.next, a.SndUna) {
		return false
	}
	if r.seg == 0 {
		r.next = a.SndNxt
		return true
	}
	n := 0
	for !seqAfter(r.next, a.SndUna) {
		r.next += r.seg
		n++
	}
	if n > 1 {
		r.count["several segments in one ACK"]++
	}
	return true
}

// onAck steps the reference. It returns the rates the core may have: one,
// or more when the sign of g is within the core's resolution of 0 (then
// both the increase and a cut by a vanishing factor are the algorithm up
// to rounding, and the HAI count may be either), and whether this ACK was
// a completion.
func (r *timelyRef) onAck(a Ack) ([]timelyStep, bool) {
	hold := []timelyStep{{r.rate, 0, "hold"}}
	if !r.completes(a) {
		return hold, false
	}
	rtt := float64(a.RTTus) * 1000
	if r.prevRTT == 0 {
		r.prevRTT = rtt
		r.count["first completion"]++
	}
	newDiff := rtt - r.prevRTT
	r.prevRTT = rtt
	// rttDiff is a whole number of ns while slack is 0; newDiff always is
	s := (1 - r.alpha) * r.slack
	if r.slack != 0 || (1e6-r.alphaPPM)*uint64(math.Round(math.Abs(r.rttDiff)))%1e6 != 0 {
		s++
	}
	if r.alphaPPM*uint64(math.Abs(newDiff))%1e6 != 0 {
		s++
	}
	r.slack = s
	r.rttDiff = (1-r.alpha)*r.rttDiff + r.alpha*newDiff
	if s == 0 {
		r.rttDiff = math.Round(r.rttDiff)
	}
	switch {
	case r.rttDiff+r.slack < 0: // the core's rtt_diff < 0
		r.negLo, r.negHi = r.negLo+1, r.negHi+1
	case r.rttDiff-r.slack >= 0:
		r.negLo, r.negHi = 0, 0
	default:
		r.negLo, r.negHi = 0, r.negHi+1
	}
	g := r.rttDiff / r.minRTT
	switch {
	case rtt < r.tLow:
		return []timelyStep{{r.clamp(r.rate + r.delta), 0.5, "below T_low"}}, true
	case rtt > r.tHigh:
		// factor and product in ppm and whole bytes/s: 2 ppm and 1 B/s
		f := 1 - r.beta*(1-r.tHigh/rtt)
		return []timelyStep{{r.clamp(r.rate * f), r.rate*2e-6 + 1, "above T_high"}}, true
	}
	var incs []timelyStep
	if r.negHi < r.haiN || r.haiN == 1 {
		incs = append(incs, timelyStep{r.clamp(r.rate + r.delta), 0.5, "g <= 0"})
	}
	if r.negLo < r.haiN && r.negHi >= r.haiN && r.haiN > 1 {
		incs = append(incs, timelyStep{r.clamp(r.rate + r.delta), 0.5, "g <= 0 (HAI count within rounding)"})
	}
	if r.negHi >= r.haiN {
		incs = append(incs, timelyStep{r.clamp(r.rate + float64(r.haiN)*r.delta), 0.5, "g <= 0, HAI"})
	}
	// g saturates at 1000 (README: all signals); the factor floored at 0.
	// g is off by slack/minRTT, plus 1 ppm for g in ppm.
	cut := timelyStep{r.clamp(r.rate * math.Max(1-r.beta*math.Min(g, 1000), 0)),
		r.rate*(r.beta*(r.slack/r.minRTT+1e-6)+2e-6) + 1, "g > 0"}
	switch {
	case r.rttDiff < -r.slack: // the core's rtt_diff < 0
		return incs, true
	case r.rttDiff > r.slack+r.minRTT/1e6: // the core's g >= 1 ppm
		return []timelyStep{cut}, true
	}
	for i := range incs {
		incs[i].what += " (sign within rounding)"
	}
	cut.what += " (sign within rounding)"
	return append(incs, cut), true
}

// signal is 1 + g floored at 0, saturated at 1000, in ppm, and its tolerance.
func (r *timelyRef) signal() (float64, float64) {
	return math.Min(math.Max(1+r.rttDiff/r.minRTT, 0), 1000) * 1e6, r.slack/r.minRTT*1e6 + 2
}

// TestConformTimely drives TIMELY and the reference through generated RTT
// traces: random host rates (100 Mbit/s .. 100 Gbit/s), minRTT, T_low <
// T_high, alpha, beta, N, delta, floor and cap; completion segments of
// 64 KB (the default), 16 KB, anything from 1 byte to 200 KB, and 0 (the
// per-RTT clock); ACKs from a few bytes to several segments each; RTTs
// that rise, fall, stay flat, jump across and onto T_low and T_high; ACKs
// without a sample; sequence numbers that wrap. Every ACK's pacing rate,
// window and signal agree within that step's rounding, and the
// completions (the trace's rtt flag) are where the paper's clock puts
// them.
func TestConformTimely(t *testing.T) {
	rng := rand.New(rand.NewSource(21))
	const mss = DefaultMSS
	count := map[string]int{}
	for trace := 0; trace < 400; trace++ {
		mbps := uint64(logUniform(rng, 100, 100000))
		lineKbps := mbps * 1000
		minRTT := uint64(logUniform(rng, 1000, 500000))
		tLow := uint64(5000 + rng.Intn(195000))
		tHigh := tLow + uint64(logUniform(rng, 1000, 2e6))
		if rng.Intn(3) == 0 { // whole us: samples land exactly on them
			minRTT, tLow, tHigh = 20000, tLow/1000*1000, tHigh/1000*1000+1000
		}
		alphaPPM, betaPPM, haiN := uint64(875000), uint64(800000), 5
		if rng.Intn(2) == 0 {
			alphaPPM = uint64(500000 + rng.Intn(500001))
			betaPPM = uint64(100000 + rng.Intn(900001))
			haiN = 1 + rng.Intn(10)
		}
		var deltaKbps, floorKbps uint64
		if rng.Intn(3) == 0 {
			deltaKbps = 1 + uint64(rng.Int63n(int64(lineKbps/100)))
		}
		if rng.Intn(3) == 0 {
			floorKbps = 1 + uint64(rng.Int63n(int64(lineKbps/2)))
		}
		capBytes := uint64(16 << 20)
		if rng.Intn(2) == 0 {
			capBytes = 65535 + uint64(rng.Int63n(1<<30-65535+1))
		}
		seg := []uint32{65536, 16384, 1 + uint32(rng.Intn(200000)), 0}[rng.Intn(4)]
		kv := []string{fmt.Sprintf("host_bw_mbps=%d", mbps), fmt.Sprintf("min_rtt_ns=%d", minRTT),
			fmt.Sprintf("t_low_ns=%d", tLow), fmt.Sprintf("t_high_ns=%d", tHigh),
			fmt.Sprintf("alpha_ppm=%d", alphaPPM), fmt.Sprintf("beta_ppm=%d", betaPPM),
			fmt.Sprintf("hai_n=%d", haiN), fmt.Sprintf("delta_kbps=%d", deltaKbps),
			fmt.Sprintf("min_rate_kbps=%d", floorKbps), fmt.Sprintf("max_cwnd_bytes=%d", capBytes),
			fmt.Sprintf("seg_bytes=%d", seg)}
		initKbps := randomInitKbps(rng, lineKbps)
		kv = append(kv, fmt.Sprintf("init_rate_kbps=%d", initKbps))
		// the connection's first sequence number: some traces wrap 2^32
		start := rng.Uint32()
		if rng.Intn(4) == 0 {
			start = -uint32(rng.Intn(1 << 20))
		}
		c, out, err := NewController(paramsWith(t, Timely, kv...), start, mss)
		if err != nil {
			t.Fatal(err)
		}
		line := float64(mbps) * 125000
		ref := &timelyRef{minRTT: float64(minRTT), tLow: float64(tLow), tHigh: float64(tHigh),
			alphaPPM: alphaPPM, alpha: float64(alphaPPM) / 1e6, beta: float64(betaPPM) / 1e6,
			haiN: haiN, delta: line / 1000, floor: line / 100, line: line, rate: line,
			seg: seg, next: start + seg, count: count}
		if deltaKbps != 0 {
			ref.delta = float64(deltaKbps) * 125
		}
		if floorKbps != 0 {
			ref.floor = float64(floorKbps) * 125
		}
		ref.rate = startRate(initKbps, ref.floor, line)
		if out.PacingRate != uint64(ref.rate) || out.CwndBytes != capBytes || out.SignalPPM != 1e6 {
			t.Fatalf("trace %d: init pacing %d cwnd %d signal %d; want the starting rate %.0f, the cap %d, 1.0",
				trace, out.PacingRate, out.CwndBytes, out.SignalPPM, ref.rate, capBytes)
		}
		una, nxt := start, start
		// per RTT: windows of up to 4, 21 or 121 segments, up to about
		// 3, 15 or 80 ACKs per update; per completion: ACKs of up to
		// 3 segments, a quarter or twice a completion's bytes
		winSegs := []int{3, 20, 120}[rng.Intn(3)]
		win := uint32(mss * (2 + rng.Intn(winSegs)))
		ackMax := 3 * mss
		if seg != 0 {
			ackMax = []int{3 * mss, max(int(seg)/4, 1), 2 * int(seg)}[rng.Intn(3)]
		}
		rttUs := logUniform(rng, 1, 3*float64(tHigh)/1000)
		var mode, left int
		var now uint64 = 1e6
		for i := 0; i < 600; i++ {
			if left == 0 { // a new stretch of the RTT trace
				mode, left = rng.Intn(6), 1+rng.Intn(40)
				switch mode {
				case 3: // jump across or onto a threshold, or anywhere
					switch rng.Intn(5) {
					case 0:
						rttUs = float64(tLow) / 1000 * (0.8 + 0.4*rng.Float64())
					case 1:
						rttUs = float64(tHigh) / 1000 * (0.8 + 0.4*rng.Float64())
					case 2:
						rttUs = float64(tLow / 1000)
					case 3:
						rttUs = float64(tHigh / 1000)
					default:
						rttUs = logUniform(rng, 1, 3*float64(tHigh)/1000)
					}
				}
				if rng.Intn(10) == 0 {
					win = uint32(mss * (2 + rng.Intn(winSegs)))
				}
			}
			left--
			step := 1 + rng.Float64()*rttUs/20
			switch mode {
			case 0:
				rttUs += step
			case 1:
				rttUs -= step
			case 5:
				rttUs += step * (rng.Float64()*2 - 1)
			}
			rttUs = math.Min(math.Max(rttUs, 1), 999999)
			a := Ack{NowNs: now, MSS: mss, RTTus: uint32(rttUs)}
			if rng.Intn(7) == 0 {
				a.RTTus = 0 // no sample
			}
			if rng.Intn(10) != 0 {
				a.AckedBytes = uint32(1 + rng.Intn(ackMax))
			}
			now += uint64(1 + rng.Intn(20000))
			una += a.AckedBytes
			if seqAfter(una+win, nxt) {
				nxt = una + win
			}
			a.SndUna, a.SndNxt = una, nxt
			out = onAck(t, c, a)
			want, updated := ref.onAck(a)
			got := float64(out.PacingRate)
			ok := false
			for _, w := range want {
				if near(got, w.rate, 0, w.tol) {
					ok = true
					count[w.what]++
				}
			}
			if updated && seg == 0 {
				count["per-RTT update"]++
			}
			sig, sigTol := ref.signal()
			if !ok || out.CwndBytes != capBytes || out.Trace.Has(TrRTT) != updated ||
				!near(float64(out.SignalPPM), sig, 0, sigTol) {
				t.Fatalf("trace %d (%d Mbit/s, minRTT %d, T_low %d, T_high %d ns, alpha %d beta %d ppm, N %d, delta %.0f floor %.0f B/s, seg %d) ACK %d, rtt %d us, acked %d, una %d nxt %d:\n"+
					"core: pacing %d B/s, cwnd %d, signal %d ppm, trace %s\nreference: %+v, cwnd %d, signal %.0f±%.0f ppm, completion %v (rtt_diff %.3f±%.3f ns, %d..%d negative gradients, next %d)",
					trace, mbps, minRTT, tLow, tHigh, alphaPPM, betaPPM, haiN, ref.delta, ref.floor, seg, i, a.RTTus, a.AckedBytes, a.SndUna, a.SndNxt,
					out.PacingRate, out.CwndBytes, out.SignalPPM, out.Trace, want, capBytes, sig, sigTol, updated, ref.rttDiff, ref.slack, ref.negLo, ref.negHi, ref.next)
			}
			ref.rate = got // follow the core's integer rate
		}
	}
	t.Logf("steps by kind: %v", count)
	for _, k := range []string{"hold", "first completion", "below T_low", "above T_high", "g > 0", "g <= 0",
		"g <= 0 (sign within rounding)", "several segments in one ACK", "per-RTT update"} {
		if count[k] < 100 {
			t.Errorf("only %d steps of kind %q: the traces do not exercise it", count[k], k)
		}
	}
	if hai := count["g <= 0, HAI"] + count["g <= 0, HAI (sign within rounding)"]; hai < 100 {
		t.Errorf("only %d hyper-active increases", hai)
	}
}

// TestConformTimelyHyperActive: between T_low and T_high, with g <= 0,
// the k-th consecutive completion with a negative gradient adds delta
// while k < N and N*delta from k = N on (Algorithm 1: "N = 5 if gradient
// < 0 for five completion events"); a flat sample does not end HAI while
// the EWMA of the differences is still negative, a gradient back at 0
// does; neither ACKs that complete no segment (whatever their RTT) nor a
// completing ACK without a sample count, and the next ACK with a sample
// completes in its place; an ACK of several segments is one completion.
func TestConformTimelyHyperActive(t *testing.T) {
	rng := rand.New(rand.NewSource(22))
	for _, n := range []int{1, 2, 3, 5, 8, 10} {
		mbps := uint64(logUniform(rng, 100, 100000))
		line := mbps * 125000
		delta := line / 1000
		seg := []uint32{65536, 16384, 1 + uint32(rng.Intn(100000))}[rng.Intn(3)]
		kv := []string{fmt.Sprintf("host_bw_mbps=%d", mbps), fmt.Sprintf("hai_n=%d", n),
			"t_low_ns=50000", "t_high_ns=500000", "min_rtt_ns=20000", fmt.Sprintf("seg_bytes=%d", seg)}
		if rng.Intn(2) == 0 {
			kbps := 1 + uint64(rng.Int63n(int64(mbps*1000/200)))
			kv, delta = append(kv, fmt.Sprintf("delta_kbps=%d", kbps)), kbps*125
		}
		c, out := newCtl(t, Timely, kv...)
		var una uint32 // the boundaries are multiples of seg
		now := uint64(1e6)
		ack := func(acked, rttUs uint32) Out {
			una += acked
			now += 1000
			return onAck(t, c, Ack{NowNs: now, AckedBytes: acked, MSS: DefaultMSS, SndNxt: una + 1<<20, SndUna: una, RTTus: rttUs})
		}
		complete := func(rttUs uint32) Out { return ack(seg, rttUs) }
		// 2 ms, above T_high: the first completion cuts too, then three
		// more, to 2.6 % of line
		for i := 0; i < 4; i++ {
			out = complete(2000)
		}
		if out.PacingRate > line/20 {
			t.Fatalf("N %d: rate %d after four cuts at 4*T_high, want below %d", n, out.PacingRate, line/20)
		}
		rtt := uint32(490) // falling from 2000 us
		check := func(o Out, step uint64, neg bool, what string) {
			t.Helper()
			if o.PacingRate != out.PacingRate+step || (o.SignalPPM < 1e6) != neg {
				t.Fatalf("N %d, delta %d B/s, seg %d, %s (rtt %d us): rate %d -> %d (%+d), signal %d; want %+d, g < 0 %v",
					n, delta, seg, what, rtt, out.PacingRate, o.PacingRate, int64(o.PacingRate)-int64(out.PacingRate), o.SignalPPM, step, neg)
			}
			out = o
		}
		negs := 0 // consecutive completions with a negative gradient
		hai := func() uint64 {
			negs++
			if negs >= n {
				return uint64(n) * delta
			}
			return delta
		}
		for k := 1; k <= 2*n+3; k++ {
			check(complete(rtt), hai(), true, fmt.Sprintf("fall %d", k))
			if k == n/2+1 {
				check(ack(seg-1, 3000), 0, true, "a rising sample that completes no segment")
				check(ack(1, 0), 0, true, "no sample at the completion")
				check(ack(0, rtt), hai(), true, "the next ACK with a sample completes it (a flat sample)")
				rtt--
				check(ack(3*seg, rtt), hai(), true, "three segments in one ACK: one completion")
				// from here on snd_una stays seg - 1 past a boundary:
				// each complete() below still passes exactly one
				check(ack(seg-1, 3000), 0, true, "no new boundary reached")
			}
			rtt--
		}
		// flat samples after the falls: rtt_diff decays by (1 - alpha)
		// per completion but stays negative for a few completions, and
		// so does HAI (counting falling raw samples would restart it at
		// once); then the gradient is back at 0 (in whole ns) and the
		// step is delta
		rtt++
		for i := 0; ; i++ {
			o := complete(rtt)
			if o.SignalPPM >= 1e6 {
				if i < 2 {
					t.Fatalf("N %d: the gradient at 0 after %d flat samples, want a few", n, i+1)
				}
				negs = 0
				check(o, delta, false, "a flat sample with the gradient back at 0")
				break
			}
			if i == 30 {
				t.Fatalf("N %d: the gradient still negative after 30 flat samples", n)
			}
			check(o, hai(), true, "a flat sample, the gradient still negative")
		}
	}
}

// randomAcked is an ACK's newly acked bytes: none now and then, mostly
// up to 64 KB, one in 20 up to most.
func randomAcked(rng *rand.Rand, most int) uint32 {
	switch k := rng.Intn(20); {
	case k < 2:
		return 0
	case k < 19:
		return uint32(rng.Intn(64 << 10))
	}
	return uint32(rng.Intn(most))
}

// dcqcnRef is DCQCN (section 3 of the paper) in float64: the
// notification point's rule as the paper words it ("a CNP is sent at once
// when a marked packet arrives and none was sent in the last N; then at
// most one CNP every N for the flow, if any packet that arrives within
// that time window was marked"), fed with the marks as the sender sees
// them (an ECE ACK: a marked packet arrived), on the ACK clock, and the
// reaction point, with the README's choices: timers and the byte counter
// are evaluated on ACKs, an expiry before a CNP of the same time;
// increase events 1..F are fast recovery; without a byte counter T alone
// decides (both counts are T); before the first CNP: line rate, alpha 1,
// no timers; started below the line (init_rate_kbps), the limiter runs
// from the first ACK, timers and alpha decay counted from it.
//
// The NP is kept here as the list of its sending times: cnpAt is the
// time of the last CNP sent, marked whether a marked packet arrived in
// the window since; a CNP at the end of a window is delivered to the RP
// on the first ACK at or after it, and takes effect at that time.
type dcqcnRef struct {
	line, floor, rai, rhai float64 // bytes/s
	alphaK, timerT, cnpN   uint64  // ns
	byteB                  uint64  // bytes, 0 = no byte counter
	gShift                 int
	g                      float64 // 2^-g_shift
	f                      int     // F
	rc, rt, alpha          float64
	// How far the core's integers may be from rc, rt (bytes/s) and
	// alpha (a fraction) after this ACK: see onAck.
	rcSlack, rtSlack, alphaSlack float64
	started                      bool
	sent                         bool   // the NP sent a CNP
	cnpAt                        uint64 // when, ns
	marked                       bool   // a mark in [cnpAt, cnpAt + N)
	alphaFrom                    uint64 // the last CNP's time, or when the limiter started
	decays                       uint64 // alpha-timer expiries since alphaFrom, applied
	timerNext                    uint64 // the rate-increase timer's next expiry, ns
	bytes                        uint64 // acked bytes towards the next byte-counter event
	t, bc                        int    // T, BC
	// the rule before the fix, for the log: an ECE ACK is a CNP when it
	// comes N or more after the last such (or is the first)
	oldSent bool
	oldAt   uint64
	oldCNPs int
	count   map[string]int
}

// increase applies one increase event (T or BC already counts it).
func (r *dcqcnRef) increase() {
	t, bc := r.t, r.bc
	if r.byteB == 0 { // "T alone decides": read in the code as BC = T
		bc = t
	}
	switch lo, hi := min(t, bc), max(t, bc); {
	case hi <= r.f:
		r.count["fast recovery"]++
	case lo > r.f:
		r.rt += float64(lo-r.f) * r.rhai
		r.count["hyper increase"]++
	default:
		r.rt += r.rai
		r.count["additive increase"]++
	}
	r.rt, r.rtSlack = clampSlack(r.rt, r.rtSlack, r.floor, r.line) // RT within [floor, HostBw]
	r.rc, r.rcSlack = halfwaySlack(r.rc, r.rcSlack, r.rt, r.rtSlack)
}

// clampSlack clamps x, a reference value the core's integer is within
// ±slack of, to [lo, hi]: when the core's value is surely beyond a bound
// too, both are exactly that bound.
func clampSlack(x, slack, lo, hi float64) (float64, float64) {
	switch {
	case x-slack >= hi:
		return hi, 0
	case x+slack <= lo:
		return lo, 0
	}
	return math.Min(math.Max(x, lo), hi), slack
}

// halfwaySlack is (c + t) / 2 of two reference values and how far the
// core's may be from it: the core's sum halved in whole bytes/s, floored.
func halfwaySlack(c, cSlack, t, tSlack float64) (float64, float64) {
	return (c + t) / 2, (cSlack+tSlack)/2 + 0.5
}

// dcqcnEvents is the increase-event cap (README: "at most 16" before a
// window-end CNP and as many after it).
const dcqcnEvents = 16

// advance runs the RP's clocks to until with bytes newly acked there:
// alpha's decays, the timer's expiries (by until) and the byte counter's
// events, capped. It returns the alpha decays applied.
func (r *dcqcnRef) advance(until uint64, bytes uint32) uint64 {
	var decays uint64
	// alpha: (1 - g) per K elapsed since the last CNP
	if n := (until-r.alphaFrom)/r.alphaK - r.decays; n > 0 {
		// (this ACK's earlier steps' error decays with alpha)
		r.alphaSlack = r.alphaSlack*math.Pow(1-r.g, float64(n)) + 1e-6 + r.alpha*math.Ldexp(1, r.gShift-30)
		r.alpha *= math.Pow(1-r.g, float64(n))
		r.decays += n
		decays = n
		if n >= 1<<20 {
			r.count["alpha decay over 2^20 periods"]++
		}
	}
	var nt, nb uint64 // timer expiries due, byte-counter events due
	if until >= r.timerNext {
		nt = (until-r.timerNext)/r.timerT + 1
	}
	if r.byteB > 0 {
		r.bytes += uint64(bytes)
		nb = r.bytes / r.byteB
	}
	// From the code, not the README: the timer's events come before
	// the byte counter's (they are due by until; the bytes count at
	// until), and the cap takes from them in that order. Of what is
	// over the cap, the timer restarts at until (until + T: the dropped
	// expiries do not count in T) and the byte counter keeps only its
	// remainder below B.
	te := min(nt, dcqcnEvents)
	for i := uint64(0); i < te; i++ {
		r.t++
		r.increase()
	}
	be := min(nb, dcqcnEvents-te)
	for i := uint64(0); i < be; i++ {
		r.bc++
		r.increase()
	}
	r.bytes -= be * r.byteB
	if nt > te {
		r.timerNext = until + r.timerT
		r.count["timer events over the cap"]++
	} else {
		r.timerNext += nt * r.timerT
	}
	if nb > be {
		r.bytes %= r.byteB
		r.count["byte events over the cap"]++
	}
	return decays
}

// cnp is the RP's reaction to a CNP at time at.
func (r *dcqcnRef) cnp(at uint64) {
	r.rt, r.rtSlack = r.rc, r.rcSlack
	r.rc = math.Max(r.rc*(1-r.alpha/2), r.floor)
	r.rcSlack = r.rcSlack + r.rt*r.alphaSlack/2 + 1
	r.alpha = (1-r.g)*r.alpha + r.g
	r.alphaSlack = (1-r.g)*r.alphaSlack + 2e-6
	r.t, r.bc, r.bytes, r.decays = 0, 0, 0, 0
	r.timerNext = at + r.timerT
	r.alphaFrom = at
	r.started = true
}

// onAck steps the reference from the core's RC and alpha (rc, alpha); it
// reports how many CNPs this ACK delivered and how many alpha-timer
// expiries it applied. The slacks bound the core's rounding (README:
// integers only): RC and RT in whole bytes/s, each halving floored (RT
// is not an output: the reference keeps its own, and its slack from the
// RC it was taken from); alpha in ppm, a CNP's update flooring alpha >>
// g_shift and 1e6 >> g_shift (2 ppm), the decay's (1-g)^n a
// square-and-multiply in units of 2^-30 with each product truncated: the
// error doubles with each squaring while (1-g)^(2^i) is near 1, about
// g_shift squarings, and shrinks after, so it stays within about
// 2^g_shift units of 2^-30 of alpha, plus 1 ppm for the final product.
func (r *dcqcnRef) onAck(a Ack) (cnps int, decays uint64) {
	now := a.NowNs
	r.rcSlack, r.alphaSlack = 0, 0
	if r.started && r.timerNext == 0 { // started below the line: armed now
		r.timerNext, r.alphaFrom = now+r.timerT, now
	}
	// The NP's window since its last CNP ended by now with a mark in
	// it: a CNP at its end.
	if r.sent && r.marked && now >= r.cnpAt+r.cnpN {
		at := r.cnpAt + r.cnpN
		decays += r.advance(at, 0)
		r.cnp(at)
		r.cnpAt, r.marked = at, false
		r.count["CNP at the end of a window"]++
		cnps++
	}
	if r.started {
		decays += r.advance(now, a.AckedBytes)
	}
	if !a.ECE {
		return cnps, decays
	}
	if !r.oldSent || now-r.oldAt >= r.cnpN {
		r.oldSent, r.oldAt = true, now
		r.oldCNPs++
	}
	// A marked packet arrived.
	if r.sent && now < r.cnpAt+r.cnpN {
		r.marked = true
		r.count["mark within N of the last CNP"]++
		return cnps, decays
	}
	r.cnp(now)
	r.sent, r.cnpAt, r.marked = true, now, false
	r.count["CNP at once"]++
	return cnps + 1, decays
}

// TestConformDCQCN drives DCQCN and the reference through generated ACK
// streams: gaps from 0 and microseconds to many timer periods and idle
// gaps of thousands (and a few of 2^20 alpha periods); ECE in bursts and
// sparse; random acked bytes; the byte counter on and off; random F,
// g_shift, K, T, N, R_AI, R_HAI and floor; a quarter of the streams
// start at the clock's 0 (a CNP at time 0 spaces the next as any does).
// Every ACK's rate RC, alpha and window agree within that step's
// rounding, and the trace's ece flag marks the ACKs that delivered a CNP.
func TestConformDCQCN(t *testing.T) {
	rng := rand.New(rand.NewSource(23))
	count := map[string]int{}
	var worstRC, worstAlpha float64 // largest differences seen, B/s and ppm
	var cnps, oldCNPs int
	for trace := 0; trace < 300; trace++ {
		mbps := uint64(logUniform(rng, 100, 100000))
		lineKbps := mbps * 1000
		alphaK, timerT := uint64(55000), uint64(55000)
		if rng.Intn(3) != 0 {
			alphaK, timerT = uint64(logUniform(rng, 1000, 1e6)), uint64(logUniform(rng, 1000, 1e6))
		}
		cnpN := []uint64{0, 50000, uint64(rng.Intn(200000))}[rng.Intn(3)]
		byteB := uint64(0)
		if rng.Intn(3) != 0 {
			byteB = uint64(logUniform(rng, 1000, 10<<20))
		}
		gShift := []int{8, 4, rng.Intn(17)}[rng.Intn(3)]
		f := []int{5, 0, rng.Intn(11)}[rng.Intn(3)]
		var raiKbps, rhaiKbps, floorKbps uint64
		if rng.Intn(3) == 0 {
			raiKbps = 1 + uint64(rng.Int63n(int64(lineKbps/50)))
		}
		if rng.Intn(3) == 0 {
			rhaiKbps = 1 + uint64(rng.Int63n(int64(lineKbps/10)))
		}
		if rng.Intn(3) == 0 {
			floorKbps = 1 + uint64(rng.Int63n(int64(lineKbps/2)))
		}
		capBytes := uint64(16 << 20)
		if rng.Intn(2) == 0 {
			capBytes = 65535 + uint64(rng.Int63n(1<<30-65535+1))
		}
		initKbps := randomInitKbps(rng, lineKbps)
		c, out := newCtl(t, DCQCN, fmt.Sprintf("init_rate_kbps=%d", initKbps), fmt.Sprintf("host_bw_mbps=%d", mbps), fmt.Sprintf("alpha_ns=%d", alphaK),
			fmt.Sprintf("timer_ns=%d", timerT), fmt.Sprintf("cnp_ns=%d", cnpN),
			fmt.Sprintf("byte_counter_bytes=%d", byteB), fmt.Sprintf("g_shift=%d", gShift),
			fmt.Sprintf("fast_recovery=%d", f), fmt.Sprintf("rai_kbps=%d", raiKbps),
			fmt.Sprintf("rhai_kbps=%d", rhaiKbps), fmt.Sprintf("min_rate_kbps=%d", floorKbps),
			fmt.Sprintf("max_cwnd_bytes=%d", capBytes))
		line := float64(mbps) * 125000
		ref := &dcqcnRef{line: line, floor: line / 100, rai: line / 1000, alphaK: alphaK, timerT: timerT, cnpN: cnpN,
			byteB: byteB, gShift: gShift, g: math.Ldexp(1, -gShift), f: f, rc: line, rt: line, alpha: 1, count: count}
		if raiKbps != 0 {
			ref.rai = float64(raiKbps) * 125
		}
		ref.rhai = 10 * ref.rai
		if rhaiKbps != 0 {
			ref.rhai = float64(rhaiKbps) * 125
		}
		if floorKbps != 0 {
			ref.floor = float64(floorKbps) * 125
		}
		ref.rc = startRate(initKbps, ref.floor, line)
		ref.rt, ref.started = ref.rc, ref.rc < line
		if ref.started {
			count["started below the line"]++
		}
		if out.PacingRate != uint64(ref.rc) || out.SignalPPM != 1e6 || out.CwndBytes != capBytes {
			t.Fatalf("trace %d: init pacing %d alpha %d cwnd %d; want the starting rate %.0f, alpha 1, the cap %d",
				trace, out.PacingRate, out.SignalPPM, out.CwndBytes, ref.rc, capBytes)
		}
		now := uint64(1e9)
		atZero := rng.Intn(4) == 0
		if atZero {
			now = 0
		}
		var una uint32
		marking := false
		for i := 0; i < 500; i++ {
			switch k := rng.Intn(100); {
			case i == 0 && atZero: // the first ACK at the clock's 0
			case k < 5: // same instant
			case k < 60:
				now += uint64(logUniform(rng, 100, math.Max(float64(timerT)/4, 200)))
			case k < 85:
				now += uint64(rng.Int63n(int64(3*timerT))) + 1
			case k < 95:
				now += uint64(3+rng.Intn(38)) * timerT
			case k < 99: // idle
				now += uint64(logUniform(rng, 1000, 100000)) * timerT
			default: // long enough for 2^20 alpha periods
				now += (1<<20 + uint64(rng.Intn(1<<20))) * alphaK
			}
			if rng.Intn(12) == 0 {
				marking = !marking
			}
			a := Ack{NowNs: now, MSS: DefaultMSS, RTTus: uint32(rng.Intn(200))}
			p := 0.03 // sparse marks, or bursts
			if marking {
				p = 0.6
			}
			a.ECE = rng.Float64() < p || (i == 0 && atZero)
			if a.ECE && now == 0 {
				count["CNP at time 0"]++
			}
			a.AckedBytes = randomAcked(rng, 4<<20)
			una += a.AckedBytes
			a.SndUna, a.SndNxt = una, una+uint32(capBytes)
			rc0, alpha0 := out.PacingRate, out.SignalPPM
			out = onAck(t, c, a)
			n, decays := ref.onAck(a)
			cnps += n
			rcTol, alphaTol := ref.rcSlack+1e-6, ref.alphaSlack+1e-9
			worstRC = math.Max(worstRC, math.Abs(float64(out.PacingRate)-ref.rc))
			worstAlpha = math.Max(worstAlpha, math.Abs(float64(out.SignalPPM)-ref.alpha*1e6))
			if !near(float64(out.PacingRate), ref.rc, 0, rcTol) || !near(float64(out.SignalPPM)/1e6, ref.alpha, 0, alphaTol) ||
				out.CwndBytes != capBytes || out.Trace.Has(TrECE) != (n > 0) {
				t.Fatalf("trace %d (%d Mbit/s, K %d T %d N %d ns, B %d, g 2^-%d, F %d, R_AI %.0f R_HAI %.0f floor %.0f B/s) ACK %d at %d ns, ECE %v, acked %d, alpha decays %d:\n"+
					"core: RC %d B/s, alpha %d ppm, cwnd %d, trace %s (before: RC %d alpha %d)\n"+
					"reference: RC %.1f±%.1f B/s, alpha %.1f±%.1f ppm, cwnd %d; CNPs %d (last at %d, a mark since %v), RT %.1f, T %d, BC %d, bytes %d",
					trace, mbps, alphaK, timerT, cnpN, byteB, gShift, f, ref.rai, ref.rhai, ref.floor, i, now, a.ECE, a.AckedBytes, decays,
					out.PacingRate, out.SignalPPM, out.CwndBytes, out.Trace, rc0, alpha0,
					ref.rc, rcTol, ref.alpha*1e6, alphaTol*1e6, capBytes, n, ref.cnpAt, ref.marked, ref.rt, ref.t, ref.bc, ref.bytes)
			}
			if n == 2 {
				count["two CNPs on one ACK"]++
			}
			// follow the core's integers (RT is not an output: the
			// reference keeps its own)
			ref.rc, ref.alpha = float64(out.PacingRate), float64(out.SignalPPM)/1e6
		}
		oldCNPs += ref.oldCNPs
	}
	t.Logf("events: %v; largest differences: RC %.1f B/s, alpha %.2f ppm", count, worstRC, worstAlpha)
	t.Logf("CNPs: %d by the paper's NP, %d by ECE ACKs N apart (the rule before 2026-11-28)", cnps, oldCNPs)
	for _, k := range []string{"CNP at once", "CNP at the end of a window", "mark within N of the last CNP",
		"two CNPs on one ACK", "fast recovery", "additive increase",
		"hyper increase", "timer events over the cap", "byte events over the cap", "alpha decay over 2^20 periods",
		"started below the line", "CNP at time 0"} {
		if count[k] < 20 {
			t.Errorf("only %d of %q: the traces do not exercise it", count[k], k)
		}
	}
}

// randomInitKbps draws init_rate_kbps for a trace: 0 (the line) three
// times in four, else anything up to 1.2 x the line (so also above it
// and below the floor).
func randomInitKbps(rng *rand.Rand, lineKbps uint64) uint64 {
	if rng.Intn(4) != 0 {
		return 0
	}
	return 1 + uint64(rng.Int63n(int64(lineKbps*6/5)))
}

// startRate is the README's starting rate, bytes/s: init_rate_kbps
// within [floor, line], 0 the line.
func startRate(initKbps uint64, floor, line float64) float64 {
	if initKbps == 0 {
		return line
	}
	return math.Min(math.Max(float64(initKbps)*125, floor), line)
}

// TestConformRateLawEdges: two edge cases of the rate laws' clocks,
// against the papers' rules worked out by hand.
//
// DCQCN's NP spaces CNPs N apart whenever the last was sent, the clock's
// 0 included: a CNP at time 0 (RC = line / 2, alpha = 1), a mark 1 us
// later is within N = 50 us (no cut), and the window's end at 50 us
// brings the CNP it owes (RC halves again).
//
// The timers of DCQCN, QCN and QCN-T evaluated on ACKs near the clock's
// end (2^64 - 1 ns): an expiry past it never comes. Each law is started
// at 100 Mbit/s on a 1 Gbit/s line, so its rate limiter and timers run
// from the first ACK (F = 0: every increase event moves the rate). From
// a first ACK half a timer period before the end, nothing expires: two
// ACKs at the end's last nanosecond leave rate (and DCQCN's alpha) as
// they were. From one 1.5 periods before it, exactly one timer event
// (and one alpha decay) comes: +R_AI/2 (R_AI = line/1000 for DCQCN,
// line/2000 for QCN and QCN-T, whose H is 31 cycles: active increase).
func TestConformRateLawEdges(t *testing.T) {
	c, _ := newCtl(t, DCQCN, "host_bw_mbps=1000", "cnp_ns=50000")
	steps := []struct {
		now  uint64
		ece  bool
		rate uint64
		cnp  bool
	}{{0, true, 62500000, true}, {1000, true, 62500000, false}, {49999, false, 62500000, false}, {50000, false, 31250000, true}}
	for _, s := range steps {
		o := onAck(t, c, Ack{NowNs: s.now, MSS: DefaultMSS, ECE: s.ece})
		if o.PacingRate != s.rate || o.Trace.Has(TrECE) != s.cnp {
			t.Errorf("DCQCN, CNP at time 0: ACK at %d ns (ECE %v): RC %d, trace %s; want %d, a CNP %v",
				s.now, s.ece, o.PacingRate, o.Trace, s.rate, s.cnp)
		}
	}

	const end = ^uint64(0)
	for _, tc := range []struct {
		law      Law
		timerNs  uint64
		step     uint64 // one increase event: R_AI / 2, B/s
		kv       []string
		hasAlpha bool
	}{
		{DCQCN, 55000, 62500, []string{"fast_recovery=0"}, true},
		{QCN, 7.5e6, 31250, []string{"fast_recovery=0"}, false}, // F = 0: cycles halved from the start
		{QCNT, 2.4e6, 31250, []string{"fast_recovery=0"}, false},
	} {
		for _, first := range []struct {
			before uint64 // the first ACK, this long before the end
			events uint64
		}{{tc.timerNs / 2, 0}, {tc.timerNs * 3 / 2, 1}} {
			kv := append([]string{"host_bw_mbps=1000", "init_rate_kbps=100000"}, tc.kv...)
			c, _ := newCtl(t, tc.law, kv...)
			o := onAck(t, c, Ack{NowNs: end - first.before, MSS: DefaultMSS})
			for _, now := range []uint64{end - first.before/2, end, end} {
				o = onAck(t, c, Ack{NowNs: now, MSS: DefaultMSS})
			}
			want := 12500000 + first.events*tc.step
			wantAlpha := uint64(1e6)
			if first.events == 1 {
				wantAlpha = 996093 // 1 - 1/256, in whole ppm
			}
			if o.PacingRate != want || (tc.hasAlpha && o.SignalPPM != wantAlpha) {
				t.Errorf("%s, first ACK %d ns before the clock's end: rate %d B/s, signal %d; want %d (%d timer events), alpha %d",
					tc.law, first.before, o.PacingRate, o.SignalPPM, want, first.events, wantAlpha)
			}
		}
	}
}
