package law

import (
	"math"
	"slices"
	"testing"
)

// A closed-loop model of experiments/reproduce/vai-incast.yaml at its
// scale (x 1000 in time, / 1000 in rate): 16 senders at 100 Mbit/s into
// one 100 Mbit/s port, two 1 MB flows every 20 ms, ACKs one propagation
// RTT (4.15 ms) after the dequeue, 1 us steps. A sender may have the
// law's cwnd_segs in flight (the window the kernel enforces) and sends at
// the law's pacing rate when it sets one (Swift below a segment, HPCC
// always), else at the NIC rate. The port's FIFO is unbounded and stamps
// the INT record at the dequeue, as loop_test.go's.
type incastFlow struct {
	loopFlow
	start, finish float64 // us
	done          bool
	delivered     []float64 // bytes acknowledged per ms
}

type incastResult struct {
	spread float64 // ms between the first and the last finish
	jain64 float64 // mean Jain index over 64 ms windows
	meanQ  float64 // bytes, sampled every ms
	maxQ   float64
	vai    int // ACKs on which Variable AI added more than the base AI
}

func runIncastModel(t *testing.T, l Law, kv ...string) incastResult {
	t.Helper()
	const (
		mss      = 1448
		rateMbps = 100
		tauUs    = 4150.0
		size     = 1000000
		steps    = 3000000 // 3 s: every flow ends well before
		windowMs = 64
	)
	rateBpus := float64(rateMbps) / 8
	p := paramsWith(t, l, kv...)
	flows := make([]*incastFlow, 16)
	for i := range flows {
		flows[i] = &incastFlow{start: float64(i/2) * 20000}
	}
	var fifo []loopPkt
	var q, tx, enq float64
	var qs []float64
	var r incastResult
	for step := 0; step < steps; step++ {
		now := float64(step)
		alive := false
		for _, f := range flows {
			if f.done {
				continue
			}
			alive = true
			if f.ctl == nil {
				if now < f.start {
					continue
				}
				c, out, err := NewController(p, 0, mss)
				if err != nil {
					t.Fatal(err)
				}
				f.ctl, f.out = c, out
			}
			rate := rateBpus
			if f.out.PacingRate != PacingNone {
				rate = min(rate, float64(f.out.PacingRate)/1e6)
			}
			f.credit = min(f.credit+rate, 2*mss)
			for f.credit >= mss && f.sent < size && f.sent+mss <= f.acked+uint64(f.out.CwndSegs)*mss {
				f.credit -= mss
				f.sent += mss
				enq += mss
				fifo = append(fifo, loopPkt{flow: &f.loopFlow, end: enq, sentAt: now, bytesSeq: f.sent})
				q += mss
			}
		}
		if !alive {
			break
		}
		serveStep(&fifo, &q, &tx, rateBpus, now, tauUs)
		if step%1000 == 0 {
			qs = append(qs, q)
		}
		for _, f := range flows {
			if f.ctl == nil || f.done {
				continue
			}
			for len(f.acks) > 0 && f.acks[0].ackAt <= now {
				pk := f.acks[0]
				f.acks = f.acks[1:]
				f.acked = pk.bytesSeq
				f.echoSeq++
				for len(f.delivered) <= step/1000 {
					f.delivered = append(f.delivered, 0)
				}
				f.delivered[step/1000] += mss
				out, err := f.ctl.OnAck(Ack{NowNs: uint64(now * 1000), AckedBytes: mss, MSS: mss,
					CwndSegs: f.out.CwndSegs, SndNxt: uint32(f.sent), SndUna: uint32(f.acked),
					RTTus: uint32(now - pk.sentAt + 0.5),
					Echo: &Echo{ArrivedNs: uint64(now * 1000), Count: f.echoSeq, Hops: []Hop{{
						Qlen: uint32(pk.qlen), TxBytes: uint32(pk.tx % TxWrap),
						Ts: uint32(pk.dequeueNs % TsWrap), RateMbps: rateMbps}}}})
				if err != nil {
					t.Fatal(err)
				}
				f.out = out
				if out.Trace.Has(TrVAI) {
					r.vai++
				}
				if f.acked >= size {
					f.done, f.finish, f.acks = true, now, nil
					break
				}
			}
		}
	}
	first, last := math.Inf(1), 0.0
	for i, f := range flows {
		if !f.done {
			t.Fatalf("%s %v: flow %d did not finish in %d ms (%d of %d bytes acknowledged)", l, kv, i, steps/1000, f.acked, size)
		}
		first, last = min(first, f.finish), max(last, f.finish)
	}
	r.spread = (last - first) / 1000
	for _, v := range qs {
		r.meanQ += v
		r.maxQ = max(r.maxQ, v)
	}
	r.meanQ /= float64(len(qs))
	// Jain's index of the bytes delivered in each 64 ms window, among the
	// flows active for all of it (at least two), averaged over windows.
	n := 0
	for s := 0; s+windowMs <= len(qs); s += windowMs {
		var x []float64
		for _, f := range flows {
			if int(f.start/1000)+1 > s || int(f.finish/1000)-1 < s+windowMs {
				continue
			}
			var b float64
			for ms := s; ms < s+windowMs && ms < len(f.delivered); ms++ {
				b += f.delivered[ms]
			}
			x = append(x, b)
		}
		if len(x) < 2 {
			continue
		}
		var sum, sum2 float64
		for _, v := range x {
			sum += v
			sum2 += v * v
		}
		if sum2 > 0 {
			r.jain64 += sum * sum / float64(len(x)) / sum2
			n++
		}
	}
	if n == 0 {
		t.Fatalf("%s %v: no 64 ms window with two flows in it", l, kv)
	}
	r.jain64 /= float64(n)
	return r
}

// The fast-convergence paper's claims on its 16:1 staggered incast (VI-B,
// Figures 5-6, 8-9), in the model with the C laws at the parameters
// `cclab run` gives vai-incast.yaml: the calibration's of the 1-switch
// star (results/reproduce/1c4850: base RTT 4.163 ms, 100 Mbit/s) and the
// experiment's variants (VAI on, SF every 30 ACKs, Swift's FBS off). With
// VAI + SF "the finish time of the flows is much closer together" (here:
// under half of the plain law's spread) and the flows "converge to a Jain
// Index of nearly 1 much quicker" (here: the mean Jain index of the bytes
// delivered in 64 ms windows, about 15 base RTTs, at least 0.9 and 0.05
// above the plain law's). Either mechanism alone meets these in the model,
// so VAI's own part is checked apart: Swift's tokens bring the finish
// times closer than SF alone (under 3/4 of its spread), and both laws
// spend tokens. HPCC's tokens do not narrow its spread here (SF alone:
// 308 ms, with VAI 346 ms, when this test was written); its result is
// SF's. The model is deterministic.
func TestVAIIncastModel(t *testing.T) {
	// The calibration's derivation (orchestrator/calibrate) for the star;
	// Swift's ai_bytes is the paper's 50 Mbit/s per RTT at 100 Gbit/s:
	// 52 037 B / 2000 = 26 B per RTT (HPCC's W_AI at its defaults, the
	// same).
	swift := []string{"base_rtt_ns=4163000", "base_target_ns=5204000", "per_hop_ns=0", "hops=1",
		"fs_range_ns=2081500", "host_bw_mbps=100", "vai_ai_div=31222", "ai_bytes=26"}
	hpcc := []string{"base_rtt_ns=4163000", "host_bw_mbps=100", "int_max_age_ns=30000000", "vai_ai_div=1065"}
	sf := []string{"vai_sf_acks=30"}
	vaisf := []string{"vai_enable=1", "vai_sf_acks=30"}
	fbsOff := []string{"fs_range_ns=0"}
	run := func(l Law, name string, kv ...[]string) incastResult {
		r := runIncastModel(t, l, slices.Concat(kv...)...)
		t.Logf("%-6s %-10s finish spread %4.0f ms, Jain (64 ms) %.2f, queue mean %3.0f KB max %3.0f KB, %4d ACKs with VAI",
			l, name, r.spread, r.jain64, r.meanQ/1000, r.maxQ/1000, r.vai)
		return r
	}
	claims := func(l Law, plain, with incastResult) {
		if with.spread > plain.spread/2 {
			t.Errorf("%s: finish spread %.0f ms with VAI + SF, %.0f ms without: want under half", l, with.spread, plain.spread)
		}
		if with.jain64 < 0.9 || with.jain64 < plain.jain64+0.05 {
			t.Errorf("%s: Jain index (64 ms) %.2f with VAI + SF, %.2f without: want at least 0.9 and 0.05 above", l, with.jain64, plain.jain64)
		}
		if with.vai == 0 {
			t.Errorf("%s: VAI + SF never added more than the base AI", l)
		}
	}

	plain := run(Swift, "plain", swift)
	sfOnly := run(Swift, "SF, no FBS", swift, sf, fbsOff)
	with := run(Swift, "VAI + SF", swift, vaisf, fbsOff)
	claims(Swift, plain, with)
	if with.spread > sfOnly.spread*3/4 {
		t.Errorf("swift: finish spread %.0f ms with VAI + SF, %.0f ms with SF alone: want VAI's tokens to bring it under 3/4", with.spread, sfOnly.spread)
	}

	claims(HPCC, run(HPCC, "plain", hpcc), run(HPCC, "VAI + SF", hpcc, vaisf))
}
