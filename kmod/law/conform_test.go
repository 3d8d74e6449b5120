package law

import (
	"fmt"
	"math"
	"math/rand"
	"testing"
)

// Conformance: each law's core against the paper's algorithm, written
// again here in float64 from the paper (and the choices kmod/law/README.md
// documents where the paper is silent), over many generated traces. These
// are the tests that catch a law that agrees on the hand-checked cases and
// drifts from its paper on others (repeated timestamps, saturated signals,
// windows of megabytes, Sampling Frequency's schedule).

// newCtl starts a controller of law l with kv applied to its defaults.
func newCtl(t *testing.T, l Law, kv ...string) (*Controller, Out) {
	t.Helper()
	p := paramsWith(t, l, kv...)
	c, out, err := NewController(p, 0, DefaultMSS)
	if err != nil {
		t.Fatal(err)
	}
	return c, out
}

func onAck(t *testing.T, c *Controller, a Ack) Out {
	t.Helper()
	o, err := c.OnAck(a)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func near(got, want, rel, abs float64) bool {
	return math.Abs(got-want) <= abs+rel*math.Abs(want)
}

// seqAfter is law_seq_after: a after b modulo 2^32.
func seqAfter(a, b uint32) bool { return int32(a-b) > 0 }

// thetaRef is Algorithm 2 of the PowerTCP paper (theta-PowerTCP) in
// float64, with cclab's documented choices: the first RTT sample only
// becomes prevRTT; theta_dot + 1 floored at 0; normalised power saturated
// at 1000 and floored at 0.01 where the window divides by it; Delta t
// capped at tau; the window within [one segment, the cap].
type thetaRef struct {
	tau, gamma, beta, capBytes, mss float64
	cwnd, cwndOld, power            float64
	prevRTT                         float64 // ns, 0 = none
	prevT                           uint64
	lastUpdated, lastUpdateSeq      uint32
}

// onAck steps the reference; it reports whether cwnd_old was taken.
func (r *thetaRef) onAck(a Ack) bool {
	rtt := float64(a.RTTus) * 1000
	if rtt == 0 {
		return false
	}
	if r.prevRTT == 0 {
		r.prevRTT, r.prevT = rtt, a.NowNs
	} else {
		if a.NowNs > r.prevT {
			dt := float64(a.NowNs - r.prevT)
			grad1 := math.Max((rtt-r.prevRTT)/dt+1, 0)
			norm := math.Min(grad1*rtt/r.tau, 1000)
			d := math.Min(dt, r.tau)
			r.power = (r.power*(r.tau-d) + norm*d) / r.tau
		}
		r.prevRTT, r.prevT = rtt, a.NowNs // every ACK: Alg. 2 lines 12-13
		if !seqAfter(r.lastUpdated, a.SndUna) {
			p := math.Max(r.power, 0.01)
			r.cwnd = r.gamma*(r.cwndOld/p+r.beta) + (1-r.gamma)*r.cwnd
			r.lastUpdated = a.SndNxt
		}
	}
	r.cwnd = math.Min(math.Max(r.cwnd, r.mss), r.capBytes)
	if seqAfter(a.SndUna, r.lastUpdateSeq) { // updateOld
		r.cwndOld = r.cwnd
		r.lastUpdateSeq = a.SndNxt
		return true
	}
	return false
}

// TestConformThetaPowerTCP drives theta-PowerTCP and the reference through
// generated RTT traces in which ACKs often share a timestamp (the kernel
// hands several ACKs the same clock, and a replay may repeat a sample):
// every step's window and power agree within rounding.
func TestConformThetaPowerTCP(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	const mss = float64(DefaultMSS)
	for trace := 0; trace < 200; trace++ {
		tauNs := uint64(20000 + rng.Intn(480000))
		mbps := uint32([]int{100, 1000, 10000, 25000, 100000}[rng.Intn(5)])
		c, out := newCtl(t, ThetaPowerTCP, fmt.Sprintf("base_rtt_ns=%d", tauNs),
			fmt.Sprintf("host_bw_mbps=%d", mbps))
		bdp := float64(uint64(mbps) * tauNs / 8000)
		ref := &thetaRef{tau: float64(tauNs), gamma: 0.9, beta: math.Max(math.Floor(bdp/100), 1),
			capBytes: 16 << 20, mss: mss, cwnd: float64(out.CwndBytes),
			cwndOld: float64(out.CwndBytes), power: 1}
		var now uint64 = 1e6
		var una uint32
		nxt := uint32(out.CwndBytes)
		rtt := float64(tauNs) * (1 + rng.Float64())
		for i := 0; i < 400; i++ {
			switch k := rng.Intn(10); {
			case k < 3: // same instant as the ACK before
			case k < 9:
				now += uint64(1 + rng.Intn(int(tauNs/4)))
			default:
				now += tauNs * uint64(1+rng.Intn(3))
			}
			rtt = math.Max(rtt+float64(tauNs)*(rng.Float64()-0.5)*0.2, float64(tauNs)*0.8)
			acked := uint32(1 + rng.Intn(3*DefaultMSS))
			una += acked
			if seqAfter(una+uint32(out.CwndBytes), nxt) {
				nxt = una + uint32(out.CwndBytes)
			}
			a := Ack{NowNs: now, AckedBytes: acked, MSS: DefaultMSS, SndNxt: nxt, SndUna: una,
				RTTus: uint32(rtt / 1000)}
			out = onAck(t, c, a)
			tookOld := ref.onAck(a)
			if !near(float64(out.CwndBytes), ref.cwnd, 0.01, 16) ||
				!near(float64(out.SignalPPM)/1e6, ref.power, 0.001, 2e-6) {
				t.Fatalf("trace %d (tau %d ns, %d Mbit/s) ACK %d at %d ns, rtt %d us: cwnd %d power %.6f; paper's algorithm: cwnd %.0f power %.6f",
					trace, tauNs, mbps, i, now, a.RTTus, out.CwndBytes, float64(out.SignalPPM)/1e6, ref.cwnd, ref.power)
			}
			// The reference follows the core's integer window, so only
			// this step's rounding counts.
			ref.cwnd = float64(out.CwndBytes)
			if tookOld {
				ref.cwndOld = ref.cwnd
			}
		}
	}
}

// TestConformPowerTCPPowerSaturates: PowerTCP's normalised power of one
// hop, current/B times voltage/(B*tau), saturates at 1000 as a product.
// Each sample is one pair of echoes Delta t >= tau apart, so the smoothed
// power the law reports is that hop's power. Currents below and above B,
// queues up to 5000 BDP.
func TestConformPowerTCPPowerSaturates(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	const tauNs = 50000
	for i := 0; i < 3000; i++ {
		mbps := uint32([]int{100, 1000, 10000, 100000}[rng.Intn(4)])
		c, _ := newCtl(t, PowerTCP, fmt.Sprintf("host_bw_mbps=%d", mbps), bigCap)
		bps := float64(mbps) * 125000 // bytes/s
		bdp := float64(uint64(mbps) * tauNs / 8000)
		dt := uint64(tauNs + rng.Intn(500000))
		if limit := uint64(float64(TxWrap) * 8000 / float64(mbps) / 2); dt >= limit {
			dt = limit - 1
		}
		// current = dq/dt + txRate; keep txRate <= B (a real port)
		txRate := bps * rng.Float64()
		q0 := uint64(rng.Float64() * 5000 * bdp)
		if q0 > 1<<31 {
			q0 = 1 << 31
		}
		q1 := uint64(float64(q0) * (0.9 + 0.2*rng.Float64()))
		if q1 > 1<<31 {
			q1 = 1 << 31
		}
		dtx := uint64(txRate * float64(dt) / 1e9)
		hop0 := Hop{Qlen: uint32(q0), TxBytes: 1000, Ts: 1000, RateMbps: mbps}
		hop1 := Hop{Qlen: uint32(q1), TxBytes: uint32((1000 + dtx) % TxWrap), Ts: uint32((1000 + dt) % TsWrap), RateMbps: mbps}
		now := uint64(1e9)
		onAck(t, c, Ack{NowNs: now, AckedBytes: DefaultMSS, MSS: DefaultMSS, SndNxt: 1 << 20, SndUna: 1448,
			RTTus: 100, Echo: &Echo{ArrivedNs: now, Count: 1, Hops: []Hop{hop0}}})
		now += dt
		out := onAck(t, c, Ack{NowNs: now, AckedBytes: DefaultMSS, MSS: DefaultMSS, SndNxt: 1 << 20, SndUna: 2896,
			RTTus: 100, Echo: &Echo{ArrivedNs: now, Count: 2, Hops: []Hop{hop1}}})
		current := math.Max(float64(int64(q1)-int64(q0))+float64(dtx), 0) / (float64(dt) / 1e9)
		want := math.Min(current/bps*(float64(q1)+bdp)/bdp, 1000)
		got := float64(out.SignalPPM) / 1e6
		// fixed point: current/B is kept in ppm, so its last ppm
		// times voltage/(B*tau) is the resolution
		res := 2e-6 * (float64(q1) + bdp) / bdp
		if !near(got, want, 1e-4, res) {
			t.Fatalf("sample %d: %d Mbit/s, dt %d ns, qlen %d -> %d, tx %d B: power %.6f, paper's %.6f (current/B %.4f, voltage/(B*tau) %.2f)",
				i, mbps, dt, q0, q1, dtx, got, want, current/bps, (float64(q1)+bdp)/bdp)
		}
	}
}

// TestConformSwiftAdditiveIncrease: below target Swift adds ai bytes per
// RTT at any window: one window's worth of ACKs, of any sizes, moves the
// window by ai (within the window's own growth over the RTT), with and
// without Variable AI and Sampling Frequency (no tokens: one AI step).
func TestConformSwiftAdditiveIncrease(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	variants := [][]string{nil, {"vai_enable=1"}, {"vai_sf_acks=30"}, {"vai_enable=1", "vai_sf_acks=30"}}
	for i := 0; i < 120; i++ {
		// up to 32 MB: whole bytes alone stop adding above ai*acked
		w := uint64(10000 + rng.Int63n(32<<20))
		ai := uint64(1 + rng.Intn(4*DefaultMSS))
		v := variants[i%len(variants)]
		kv := append([]string{fmt.Sprintf("init_cwnd_bytes=%d", w), "max_cwnd_bytes=1073741824",
			fmt.Sprintf("ai_bytes=%d", ai), "base_target_ns=1000000"}, v...)
		c, out := newCtl(t, Swift, kv...)
		if out.CwndBytes != w {
			t.Fatalf("initial window %d, want %d", out.CwndBytes, w)
		}
		var una uint32
		now := uint64(1e6)
		nxt := uint32(w)
		for acked := uint64(0); acked < w; {
			n := uint64(1 + rng.Intn(4*DefaultMSS))
			if n > w-acked {
				n = w - acked
			}
			acked += n
			una += uint32(n)
			now += 1000
			out = onAck(t, c, Ack{NowNs: now, AckedBytes: uint32(n), MSS: DefaultMSS, SndNxt: nxt, SndUna: una, RTTus: 100})
			if out.Trace.Has(TrDecrease) {
				t.Fatalf("window %d, %v: decreased below target (trace %s)", w, v, out.Trace)
			}
		}
		got := float64(out.CwndBytes) - float64(w)
		// ai * w / (mean window over the RTT) >= ai * w / (w + ai)
		lo := math.Floor(float64(ai)*float64(w)/float64(w+ai)) - 1
		if got < lo || got > float64(ai)+1 {
			t.Fatalf("window %d B, ai %d B, %v: one RTT of ACKs added %.0f B, want %.0f..%d", w, ai, v, got, lo, ai+1)
		}
	}
}

// TestConformHPCCSamplingFrequency checks HPCC's reference schedule under
// Sampling Frequency as kmod/law/README.md defines it: W^c (and incStage)
// is taken, from the window of that ACK, (a) while U >= eta on the
// sf_acks-th ACK with usable telemetry since W^c was last taken, (b) while
// U < eta on HPCC's per-RTT point (the first ACK past lastUpdateSeq; every
// per-RTT point sets lastUpdateSeq = snd_nxt, whether or not it takes
// W^c). Between reference points every ACK's window comes from W^c alone:
// W = W^c / (U / eta) + W_AI, or W^c + W_AI. The reference is driven by
// the core's U (the law's signal), so this checks when and from what the
// window is computed, over generated traces that cross eta both ways.
func TestConformHPCCSamplingFrequency(t *testing.T) {
	rng := rand.New(rand.NewSource(14))
	for trace := 0; trace < 100; trace++ {
		sf := uint32(1 + rng.Intn(40))
		const mbps, T, eta, maxStage = 10000, 50000, 0.95, 5
		c, out := newCtl(t, HPCC, fmt.Sprintf("vai_sf_acks=%d", sf), "max_cwnd_bytes=1073741824",
			fmt.Sprintf("host_bw_mbps=%d", mbps), fmt.Sprintf("base_rtt_ns=%d", T))
		winit := float64(mbps * T / 8000)
		wai := math.Max(math.Floor(winit*(1e6-950000)/1e6/100), 1)
		wc := float64(out.CwndBytes)
		incStage := 0
		var n uint32
		var lastSeq, una uint32
		nxt := uint32(out.CwndBytes)
		now := uint64(1e6)
		var ts, tx, q float64 = 0, 0, 0
		load := 0.7 + 0.6*rng.Float64()
		first := true
		for i := 0; i < 600; i++ {
			if rng.Intn(50) == 0 {
				load = 0.7 + 0.6*rng.Float64()
			}
			dt := float64(500 + rng.Intn(3000))
			ts += dt
			bpns := float64(mbps) / 8000 // bytes per ns
			tx += bpns * dt * math.Min(load, 1)
			q = math.Min(math.Max(q+(load-1)*bpns*dt, 0), 1e6)
			now += uint64(dt)
			acked := uint32(DefaultMSS * (1 + rng.Intn(2)))
			una += acked
			if seqAfter(una+uint32(out.CwndBytes), nxt) {
				nxt = una + uint32(out.CwndBytes)
			}
			a := Ack{NowNs: now, AckedBytes: acked, MSS: DefaultMSS, SndNxt: nxt, SndUna: una, RTTus: 60,
				Echo: &Echo{ArrivedNs: now, Count: uint32(i + 1), Hops: []Hop{{Qlen: uint32(q),
					TxBytes: uint32(uint64(tx) % TxWrap), Ts: uint32(uint64(ts) % TsWrap), RateMbps: mbps}}}}
			out = onAck(t, c, a)
			if first { // the first echo is only the reference
				first = false
				if !out.Trace.Has(TrHold) {
					t.Fatalf("first echo: trace %s, want hold", out.Trace)
				}
				continue
			}
			u := float64(out.SignalPPM) / 1e6
			dec := u >= eta
			n++
			rttEnd := seqAfter(una, lastSeq)
			update := rttEnd
			if dec {
				update = n >= sf
			}
			var want float64
			if dec || incStage >= maxStage {
				want = math.Floor(wc*eta/math.Max(u, 0.01)) + wai
			} else {
				want = wc + wai
			}
			want = math.Min(math.Max(want, DefaultMSS), 1<<30)
			if !near(float64(out.CwndBytes), want, 1e-5, 2) || out.Trace.Has(TrRTT) != update {
				t.Fatalf("trace %d (sf %d) ACK %d: U %.4f, %d ACKs since W^c, per-RTT point %v: cwnd %d trace %s; want cwnd %.0f, reference taken %v",
					trace, sf, i, u, n, rttEnd, out.CwndBytes, out.Trace, want, update)
			}
			if update {
				wc = float64(out.CwndBytes)
				n = 0
				if dec || incStage >= maxStage {
					incStage = 0
				} else {
					incStage++
				}
			}
			if rttEnd {
				lastSeq = a.SndNxt
			}
		}
	}
}

// Swift's carried AI remainder belongs to the window it was carried at:
// after the window has been cut (16 MB to below 2 segments here), the
// first increase is ai * acked / cwnd, not that plus a remainder of the
// old window's size (which added ~8 segments at once).
func TestConformSwiftRemainderAfterDecrease(t *testing.T) {
	const w = 16 << 20
	c, out := newCtl(t, Swift, fmt.Sprintf("init_cwnd_bytes=%d", w), "max_cwnd_bytes=1073741824",
		"fs_range_ns=0", "base_target_ns=100000", "per_hop_ns=0", "min_cwnd_bytes=1448")
	var una uint32
	now := uint64(1e6)
	ack := func(acked uint32, rttUs uint32) Out {
		una += acked
		now += uint64(rttUs) * 1000
		return onAck(t, c, Ack{NowNs: now, AckedBytes: acked, MSS: DefaultMSS, SndNxt: una + uint32(w), SndUna: una, RTTus: rttUs})
	}
	// Tiny ACKs below target: each leaves ai * 1 byte as remainder.
	for i := 0; i < 11000; i++ {
		out = ack(1, 50)
	}
	// Far above target, one decrease per RTT down to below two segments.
	for i := 0; i < 200 && out.CwndBytes >= 2*DefaultMSS; i++ {
		out = ack(1, 10000)
	}
	before := out.CwndBytes
	if before >= 2*DefaultMSS {
		t.Fatalf("window still %d after the decreases", before)
	}
	out = ack(DefaultMSS, 50)
	want := uint64(1448) * DefaultMSS / max(before, DefaultMSS)
	if got := out.CwndBytes - before; got > want+1 {
		t.Errorf("first increase at %d B: +%d B, want at most %d (ai * acked / cwnd)", before, got, want+1)
	}
}
