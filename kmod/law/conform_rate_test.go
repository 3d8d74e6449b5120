package law

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// Conformance of the two rate-based laws, TIMELY (timely.h) and DCQCN's
// reaction point (dcqcn.h). Each paper's algorithm is written again here
// in float64 from kmod/law/README.md (the sections "TIMELY" and "DCQCN"
// and their rows of "Where the papers are silent"), with the parameters
// and defaults of law_table.h, and compared with the C core on every ACK
// of generated traces: the pacing rate, the window (the cap only) and the
// signal. As in conform_test.go the reference takes the core's integer
// rate (DCQCN: and alpha) after each step, so a step's tolerance is only
// that step's rounding. Where the README leaves a detail open the
// reference follows the code and the comment says so.

// logUniform is a number in [lo, hi], uniform on a log scale.
func logUniform(rng *rand.Rand, lo, hi float64) float64 {
	return lo * math.Exp(rng.Float64()*math.Log(hi/lo))
}

// timelyRef is TIMELY's Algorithm 1 in float64 with the README's choices:
// one update per RTT (snd_una reaches the snd_nxt of the last update), the
// first sample only becomes prev_rtt, HAI after hai_n consecutive per-RTT
// samples that fell, the rate within [floor, HostBw].
type timelyRef struct {
	minRTT, tLow, tHigh float64 // ns
	alphaPPM            uint64
	alpha, beta         float64
	haiN                int
	delta, floor, line  float64 // bytes/s
	rate                float64 // bytes/s
	rttDiff             float64 // ns
	prevRTT             float64 // ns, 0 = no sample yet
	falls               int     // consecutive per-RTT samples with new_rtt_diff < 0
	gate                uint32  // snd_nxt at the last update
	// slack bounds |core's rtt_diff - rttDiff| in ns: the core keeps
	// rtt_diff in whole ns, flooring each of the EWMA's two products
	// (README: integers only), so each update can lose up to 1 ns per
	// inexact product; older losses decay with the EWMA.
	slack float64
}

// timelyStep is a rate the core may have after an ACK, within tol bytes/s.
type timelyStep struct {
	rate, tol float64
	what      string
}

func (r *timelyRef) clamp(x float64) float64 { return math.Min(math.Max(x, r.floor), r.line) }

// onAck steps the reference. It returns the rates the core may have: one,
// or two when the sign of g is within the core's resolution of 0 (then
// both the increase and a cut by a vanishing factor are the algorithm up
// to rounding), and whether this ACK was an update.
func (r *timelyRef) onAck(a Ack) ([]timelyStep, bool) {
	hold := []timelyStep{{r.rate, 0, "hold"}}
	// The README is silent on an ACK without a sample at the update
	// point; the code (and this reference) leaves the update to the next
	// ACK with a sample.
	if a.RTTus == 0 || seqAfter(r.gate, a.SndUna) {
		return hold, false
	}
	r.gate = a.SndNxt
	rtt := float64(a.RTTus) * 1000
	if r.prevRTT == 0 {
		r.prevRTT = rtt
		return []timelyStep{{r.rate, 0, "first sample"}}, true
	}
	newDiff := rtt - r.prevRTT
	r.prevRTT = rtt
	if newDiff < 0 {
		r.falls++
	} else {
		r.falls = 0
	}
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
	g := r.rttDiff / r.minRTT
	switch {
	case rtt < r.tLow:
		return []timelyStep{{r.clamp(r.rate + r.delta), 0.5, "below T_low"}}, true
	case rtt > r.tHigh:
		// factor and product in ppm and whole bytes/s: 2 ppm and 1 B/s
		f := 1 - r.beta*(1-r.tHigh/rtt)
		return []timelyStep{{r.clamp(r.rate * f), r.rate*2e-6 + 1, "above T_high"}}, true
	}
	n, what := 1, "g <= 0"
	if r.falls >= r.haiN {
		n, what = r.haiN, "g <= 0, HAI"
	}
	inc := timelyStep{r.clamp(r.rate + float64(n)*r.delta), 0.5, what}
	// g saturates at 1000 (README: all signals); the factor floored at 0.
	// g is off by slack/minRTT, plus 1 ppm for g in ppm.
	cut := timelyStep{r.clamp(r.rate * math.Max(1-r.beta*math.Min(g, 1000), 0)),
		r.rate*(r.beta*(r.slack/r.minRTT+1e-6)+2e-6) + 1, "g > 0"}
	switch {
	case r.rttDiff < -r.slack: // the core's rtt_diff < 0
		return []timelyStep{inc}, true
	case r.rttDiff > r.slack+r.minRTT/1e6: // the core's g >= 1 ppm
		return []timelyStep{cut}, true
	}
	inc.what += " (sign within rounding)"
	cut.what += " (sign within rounding)"
	return []timelyStep{inc, cut}, true
}

// signal is 1 + g floored at 0, saturated at 1000, in ppm, and its tolerance.
func (r *timelyRef) signal() (float64, float64) {
	return math.Min(math.Max(1+r.rttDiff/r.minRTT, 0), 1000) * 1e6, r.slack/r.minRTT*1e6 + 2
}

// TestConformTimely drives TIMELY and the reference through generated RTT
// traces: random host rates (100 Mbit/s .. 100 Gbit/s), minRTT, T_low <
// T_high, alpha, beta, N, delta, floor and cap; RTTs that rise, fall, stay
// flat, jump across and onto T_low and T_high; ACKs without a sample; many
// ACKs per RTT (one update each); sequence numbers that wrap. Every ACK's
// pacing rate, window and signal agree within that step's rounding, and
// the per-RTT point is where the README puts it.
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
		kv := []string{fmt.Sprintf("host_bw_mbps=%d", mbps), fmt.Sprintf("min_rtt_ns=%d", minRTT),
			fmt.Sprintf("t_low_ns=%d", tLow), fmt.Sprintf("t_high_ns=%d", tHigh),
			fmt.Sprintf("alpha_ppm=%d", alphaPPM), fmt.Sprintf("beta_ppm=%d", betaPPM),
			fmt.Sprintf("hai_n=%d", haiN), fmt.Sprintf("delta_kbps=%d", deltaKbps),
			fmt.Sprintf("min_rate_kbps=%d", floorKbps), fmt.Sprintf("max_cwnd_bytes=%d", capBytes)}
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
			haiN: haiN, delta: line / 1000, floor: line / 100, line: line, rate: line, gate: start}
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
		// windows of up to 4, 21 or 121 segments: up to about 3, 15 or
		// 80 ACKs per update
		winSegs := []int{3, 20, 120}[rng.Intn(3)]
		win := uint32(mss * (2 + rng.Intn(winSegs)))
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
				a.AckedBytes = uint32(1 + rng.Intn(3*mss))
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
			sig, sigTol := ref.signal()
			if !ok || out.CwndBytes != capBytes || out.Trace.Has(TrRTT) != updated ||
				!near(float64(out.SignalPPM), sig, 0, sigTol) {
				t.Fatalf("trace %d (%d Mbit/s, minRTT %d, T_low %d, T_high %d ns, alpha %d beta %d ppm, N %d, delta %.0f floor %.0f B/s) ACK %d, rtt %d us, una %d nxt %d:\n"+
					"core: pacing %d B/s, cwnd %d, signal %d ppm, trace %s\nreference: %+v, cwnd %d, signal %.0f±%.0f ppm, update %v (rtt_diff %.3f±%.3f ns, %d falls)",
					trace, mbps, minRTT, tLow, tHigh, alphaPPM, betaPPM, haiN, ref.delta, ref.floor, i, a.RTTus, a.SndUna, a.SndNxt,
					out.PacingRate, out.CwndBytes, out.SignalPPM, out.Trace, want, capBytes, sig, sigTol, updated, ref.rttDiff, ref.slack, ref.falls)
			}
			ref.rate = got // follow the core's integer rate
		}
	}
	t.Logf("steps by kind: %v", count)
	for _, k := range []string{"hold", "first sample", "below T_low", "above T_high", "g > 0", "g <= 0", "g <= 0 (sign within rounding)"} {
		if count[k] < 100 {
			t.Errorf("only %d steps of kind %q: the traces do not exercise it", count[k], k)
		}
	}
	if hai := count["g <= 0, HAI"] + count["g <= 0, HAI (sign within rounding)"]; hai < 100 {
		t.Errorf("only %d hyper-active increases", hai)
	}
}

// TestConformTimelyHyperActive: between T_low and T_high, with g <= 0,
// the k-th consecutive falling per-RTT sample adds delta while k < N and
// N*delta from k = N on; a flat sample ends the run (delta again, g still
// negative), and neither ACKs between updates (whatever their RTT) nor
// ACKs without a sample at the update point count as samples.
func TestConformTimelyHyperActive(t *testing.T) {
	rng := rand.New(rand.NewSource(22))
	for _, n := range []int{1, 2, 3, 5, 8, 10} {
		mbps := uint64(logUniform(rng, 100, 100000))
		line := mbps * 125000
		delta := line / 1000
		kv := []string{fmt.Sprintf("host_bw_mbps=%d", mbps), fmt.Sprintf("hai_n=%d", n),
			"t_low_ns=50000", "t_high_ns=500000", "min_rtt_ns=20000"}
		if rng.Intn(2) == 0 {
			kbps := 1 + uint64(rng.Int63n(int64(mbps*1000/200)))
			kv, delta = append(kv, fmt.Sprintf("delta_kbps=%d", kbps)), kbps*125
		}
		c, out := newCtl(t, Timely, kv...)
		var una, nxt uint32
		now := uint64(1e6)
		// update: an ACK at the update point; between: one before it
		update := func(rttUs uint32) Out {
			una = nxt
			nxt += 20000
			now += 1000
			return onAck(t, c, Ack{NowNs: now, AckedBytes: 1448, MSS: DefaultMSS, SndNxt: nxt, SndUna: una, RTTus: rttUs})
		}
		between := func(rttUs uint32) Out {
			now += 1000
			return onAck(t, c, Ack{NowNs: now, AckedBytes: 1, MSS: DefaultMSS, SndNxt: nxt, SndUna: una + 1, RTTus: rttUs})
		}
		// 2 ms, above T_high: first sample, then three cuts to 6.4 % of line
		for i := 0; i < 4; i++ {
			out = update(2000)
		}
		if out.PacingRate > line/10 {
			t.Fatalf("N %d: rate %d after three cuts at 4*T_high, want below %d", n, out.PacingRate, line/10)
		}
		rtt := uint32(490) // falling from 2000 us
		check := func(o Out, step uint64, what string) {
			t.Helper()
			if o.PacingRate != out.PacingRate+step || o.SignalPPM >= 1e6 {
				t.Fatalf("N %d, delta %d B/s, %s (rtt %d us): rate %d -> %d (+%d), signal %d; want +%d, g < 0",
					n, delta, what, rtt, out.PacingRate, o.PacingRate, o.PacingRate-out.PacingRate, o.SignalPPM, step)
			}
			out = o
		}
		for k := 1; k <= 2*n+3; k++ {
			want := delta
			if k >= n {
				want = uint64(n) * delta
			}
			check(update(rtt), want, fmt.Sprintf("fall %d", k))
			rtt--
			if k == n/2+1 {
				check(between(3000), 0, "a rising sample between updates")
				check(update(0), 0, "no sample at the update point")
			}
		}
		rtt++ // the last sample's
		check(update(rtt), delta, "a flat sample")
		rtt--
		check(update(rtt), delta, "the first fall after it") // N*delta = delta when N is 1
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

// dcqcnRef is DCQCN's reaction point (section 3 of the paper) in
// float64, with the README's choices: a CNP is an ECE ACK at least cnp_ns
// after the last CNP (or the first ECE); timers and the byte counter are
// evaluated on ACKs, before the CNP check; increase events 1..F are fast
// recovery; without a byte counter T alone decides (both counts are T);
// before the first CNP: line rate, alpha 1, no timers; started below the
// line (init_rate_kbps), the limiter runs from the first ACK, timers and
// alpha decay counted from it, and the first CNP is not held back by N.
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
	noCNP                        bool   // started below the line, no CNP yet
	lastCNP                      uint64 // ns (the first ACK's, while noCNP)
	decays                       uint64 // alpha-timer expiries since the last CNP, applied
	timerNext                    uint64 // the rate-increase timer's next expiry, ns
	bytes                        uint64 // acked bytes towards the next byte-counter event
	t, bc                        int    // T, BC
	count                        map[string]int
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

// dcqcnEvents is the increase-event cap per ACK (README: "at most 16").
const dcqcnEvents = 16

// onAck steps the reference from the core's RC and alpha (rc, alpha); it
// reports whether this ACK was a CNP and how many alpha-timer expiries it
// applied. The slacks bound the core's rounding (README: integers only):
// RC and RT in whole bytes/s, each halving floored (RT is not an output:
// the reference keeps its own, and its slack from the RC it was taken
// from); alpha in ppm, a CNP's update flooring alpha >> g_shift and
// 1e6 >> g_shift (2 ppm), the decay's (1-g)^n a square-and-multiply in
// units of 2^-30 with each product truncated: the error doubles with
// each squaring while (1-g)^(2^i) is near 1, about g_shift squarings, and
// shrinks after, so it stays within about 2^g_shift units of 2^-30 of
// alpha, plus 1 ppm for the final product.
func (r *dcqcnRef) onAck(a Ack) (cnp bool, decays uint64) {
	now := a.NowNs
	r.rcSlack, r.alphaSlack = 0, 0
	if r.started && r.timerNext == 0 { // started below the line: armed now
		r.timerNext, r.lastCNP, r.noCNP = now+r.timerT, now, true
	}
	if r.started {
		// alpha: (1 - g) per K elapsed since the last CNP
		if n := (now-r.lastCNP)/r.alphaK - r.decays; n > 0 {
			r.alphaSlack = 1e-6 + r.alpha*math.Ldexp(1, r.gShift-30)
			r.alpha *= math.Pow(1-r.g, float64(n))
			r.decays += n
			decays = n
			if n >= 1<<20 {
				r.count["alpha decay over 2^20 periods"]++
			}
		}
		var nt, nb uint64 // timer expiries due, byte-counter events due
		if now >= r.timerNext {
			nt = (now-r.timerNext)/r.timerT + 1
		}
		if r.byteB > 0 {
			r.bytes += uint64(a.AckedBytes)
			nb = r.bytes / r.byteB
		}
		// From the code, not the README: the timer's events come before
		// the byte counter's (they are due by now; the bytes count at
		// now), and the cap takes from them in that order. Of what is
		// over the cap, the timer restarts at this ACK (now + T: the
		// dropped expiries do not count in T) and the byte counter keeps
		// only its remainder below B.
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
			r.timerNext = now + r.timerT
			r.count["timer events over the cap"]++
		} else {
			r.timerNext += nt * r.timerT
		}
		if nb > be {
			r.bytes %= r.byteB
			r.count["byte events over the cap"]++
		}
	}
	// The README does not order the expiries against a CNP on the same
	// ACK; the code applies them first (they are due by now).
	if !a.ECE {
		return false, decays
	}
	if r.started && !r.noCNP && now-r.lastCNP < r.cnpN {
		r.count["ECE within N of the last CNP"]++
		return false, decays
	}
	r.count["CNP"]++
	r.rt, r.rtSlack = r.rc, r.rcSlack
	r.rc = math.Max(r.rc*(1-r.alpha/2), r.floor)
	r.rcSlack = r.rcSlack + r.rt*r.alphaSlack/2 + 1
	r.alpha = (1-r.g)*r.alpha + r.g
	r.alphaSlack = (1-r.g)*r.alphaSlack + 2e-6
	r.t, r.bc, r.bytes, r.decays = 0, 0, 0, 0
	r.timerNext = now + r.timerT
	r.lastCNP = now
	r.started, r.noCNP = true, false
	return true, decays
}

// TestConformDCQCN drives DCQCN and the reference through generated ACK
// streams: gaps from 0 and microseconds to many timer periods and idle
// gaps of thousands (and a few of 2^20 alpha periods); ECE in bursts and
// sparse; random acked bytes; the byte counter on and off; random F,
// g_shift, K, T, N, R_AI, R_HAI and floor. Every ACK's rate RC, alpha and
// window agree within that step's rounding.
func TestConformDCQCN(t *testing.T) {
	rng := rand.New(rand.NewSource(23))
	count := map[string]int{}
	var worstRC, worstAlpha float64 // largest differences seen, B/s and ppm
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
		var una uint32
		marking := false
		for i := 0; i < 500; i++ {
			switch k := rng.Intn(100); {
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
			a.ECE = rng.Float64() < p
			a.AckedBytes = randomAcked(rng, 4<<20)
			una += a.AckedBytes
			a.SndUna, a.SndNxt = una, una+uint32(capBytes)
			rc0, alpha0 := out.PacingRate, out.SignalPPM
			out = onAck(t, c, a)
			cnp, decays := ref.onAck(a)
			rcTol, alphaTol := ref.rcSlack+1e-6, ref.alphaSlack+1e-9
			worstRC = math.Max(worstRC, math.Abs(float64(out.PacingRate)-ref.rc))
			worstAlpha = math.Max(worstAlpha, math.Abs(float64(out.SignalPPM)-ref.alpha*1e6))
			if !near(float64(out.PacingRate), ref.rc, 0, rcTol) || !near(float64(out.SignalPPM)/1e6, ref.alpha, 0, alphaTol) ||
				out.CwndBytes != capBytes {
				t.Fatalf("trace %d (%d Mbit/s, K %d T %d N %d ns, B %d, g 2^-%d, F %d, R_AI %.0f R_HAI %.0f floor %.0f B/s) ACK %d at %d ns, ECE %v, acked %d, alpha decays %d:\n"+
					"core: RC %d B/s, alpha %d ppm, cwnd %d, trace %s (before: RC %d alpha %d)\n"+
					"reference: RC %.1f±%.1f B/s, alpha %.1f±%.1f ppm, cwnd %d; CNP %v, RT %.1f, T %d, BC %d, bytes %d",
					trace, mbps, alphaK, timerT, cnpN, byteB, gShift, f, ref.rai, ref.rhai, ref.floor, i, now, a.ECE, a.AckedBytes, decays,
					out.PacingRate, out.SignalPPM, out.CwndBytes, out.Trace, rc0, alpha0,
					ref.rc, rcTol, ref.alpha*1e6, alphaTol*1e6, capBytes, cnp, ref.rt, ref.t, ref.bc, ref.bytes)
			}
			// follow the core's integers (RT is not an output: the
			// reference keeps its own)
			ref.rc, ref.alpha = float64(out.PacingRate), float64(out.SignalPPM)/1e6
		}
	}
	t.Logf("events: %v; largest differences: RC %.1f B/s, alpha %.2f ppm", count, worstRC, worstAlpha)
	for _, k := range []string{"CNP", "ECE within N of the last CNP", "fast recovery", "additive increase",
		"hyper increase", "timer events over the cap", "byte events over the cap", "alpha decay over 2^20 periods",
		"started below the line"} {
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
