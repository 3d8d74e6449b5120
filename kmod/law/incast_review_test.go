package law

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"
)

// A closed-loop model of experiments/reproduce/vai-incast.yaml at its
// scale (x1000 in time): 16 senders at 100 Mbit/s into one 100 Mbit/s
// port, base RTT ~4.16 ms, two 1 MB flows every 20 ms, 1 us steps. The
// window the kernel enforces is the law's cwnd_segs (rounded up); the law
// paces only below one segment (Swift) or always (HPCC). The port's
// buffer is unbounded (max queue reported). Review tool, not a check.
type incFlow struct {
	loopFlow
	start     float64
	done      bool
	finish    float64
	delivered []float64 // bytes per ms
	lastRTT   float64   // us
}

type incResult struct {
	jain4, jain16, jain64 float64
	qP99, qMax, meanQ     float64
	spread                float64
	finish                []float64
}

func jainOf(x []float64) float64 {
	var s, s2 float64
	for _, v := range x {
		s += v
		s2 += v * v
	}
	if s2 == 0 {
		return math.NaN()
	}
	return s * s / float64(len(x)) / s2
}

func runIncast(t *testing.T, l Law, kv ...string) incResult {
	t.Helper()
	const (
		mss      = 1448
		rateMbps = 100
		tauUs    = 4150.0 // ACK one propagation RTT after dequeue
		size     = 1000000
		stepsMax = 3000000
	)
	rateBpus := float64(rateMbps) / 8
	pace := os.Getenv("CCLAB_REVIEW_PACE") != ""
	p := paramsWith(t, l, kv...)
	flows := make([]*incFlow, 16)
	for i := range flows {
		flows[i] = &incFlow{start: float64(i/2) * 20000}
	}
	var fifo []loopPkt
	var q, tx, enq float64
	var qs []float64
	ms := 0
	for step := 0; step < stepsMax; step++ {
		now := float64(step)
		alive := false
		for _, f := range flows {
			if f.ctl == nil && now >= f.start {
				c, out, err := NewController(p, 0, mss)
				if err != nil {
					t.Fatal(err)
				}
				f.ctl, f.out = c, out
			}
			if f.ctl == nil || f.done {
				if !f.done {
					alive = true
				}
				continue
			}
			alive = true
			rate := rateBpus
			if f.out.PacingRate != PacingNone {
				rate = min(rate, float64(f.out.PacingRate)/1e6)
			} else if pace && f.lastRTT > 0 {
				// Model option: pace an unpaced window at cwnd / RTT.
				rate = min(rate, float64(f.out.CwndBytes)/f.lastRTT)
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
		served := min(q, rateBpus)
		q -= served
		tx += served
		for len(fifo) > 0 && fifo[0].end <= tx {
			pk := fifo[0]
			fifo = fifo[1:]
			pk.qlen, pk.tx = uint64(q), uint64(tx)
			pk.dequeueNs = uint64(now * 1000)
			pk.ackAt = now + tauUs
			pk.flow.acks = append(pk.flow.acks, pk)
		}
		if step%1000 == 0 {
			qs = append(qs, q)
			ms++
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
				f.lastRTT = now - pk.sentAt
				for len(f.delivered) <= step/1000 {
					f.delivered = append(f.delivered, 0)
				}
				f.delivered[step/1000] += mss
				a := Ack{NowNs: uint64(now * 1000), AckedBytes: mss, MSS: mss,
					CwndSegs: f.out.CwndSegs, SndNxt: uint32(f.sent), SndUna: uint32(f.acked),
					RTTus: uint32(now - pk.sentAt + 0.5),
					Echo: &Echo{ArrivedNs: uint64(now * 1000), Count: f.echoSeq, Hops: []Hop{{
						Qlen: uint32(pk.qlen), TxBytes: uint32(pk.tx % TxWrap),
						Ts: uint32(pk.dequeueNs % TsWrap), RateMbps: rateMbps}}}}
				out, err := f.ctl.OnAck(a)
				if err != nil {
					t.Fatal(err)
				}
				f.out = out
				if f.acked >= size {
					f.done, f.finish = true, now
					f.acks = nil
					break
				}
			}
		}
	}
	var r incResult
	sorted := append([]float64(nil), qs...)
	sort.Float64s(sorted)
	r.qP99 = sorted[len(sorted)*99/100]
	r.qMax = sorted[len(sorted)-1]
	for _, v := range qs {
		r.meanQ += v
	}
	r.meanQ /= float64(len(qs))
	lo, hi := math.Inf(1), 0.0
	for _, f := range flows {
		r.finish = append(r.finish, f.finish/1000)
		lo, hi = min(lo, f.finish), max(hi, f.finish)
	}
	r.spread = (hi - lo) / 1000
	// Jain over windows of W ms among flows active for the whole window.
	for _, w := range []int{4, 16, 64} {
		var sum float64
		n := 0
		for s := 0; s+w <= ms; s += w {
			var x []float64
			for _, f := range flows {
				st := int(f.start/1000) + 1
				if f.ctl == nil || st > s || int(f.finish/1000)-1 < s+w {
					continue
				}
				var b float64
				for t := s; t < s+w && t < len(f.delivered); t++ {
					b += f.delivered[t]
				}
				x = append(x, b)
			}
			if len(x) >= 2 {
				if j := jainOf(x); !math.IsNaN(j) {
					sum += j
					n++
				}
			}
		}
		switch w {
		case 4:
			r.jain4 = sum / float64(n)
		case 16:
			r.jain16 = sum / float64(n)
		case 64:
			r.jain64 = sum / float64(n)
		}
	}
	return r
}

// The calibrated parameters of results/reproduce/1c4850 (run.json).
var swiftCal = []string{"base_rtt_ns=4163000", "base_target_ns=5204000", "per_hop_ns=0", "hops=1",
	"fs_range_ns=2081500", "host_bw_mbps=100", "vai_ai_div=31222"}
var hpccCal = []string{"base_rtt_ns=4163000", "host_bw_mbps=100", "int_max_age_ns=30000000", "vai_ai_div=1065"}

func TestReviewVAIIncast(t *testing.T) {
	if os.Getenv("CCLAB_REVIEW") == "" {
		t.Skip("review model: CCLAB_REVIEW=1")
	}
	vaisf := []string{"vai_enable=1", "vai_sf_acks=30"}
	cases := []struct {
		name string
		law  Law
		kv   []string
	}{
		{"hpcc", HPCC, hpccCal},
		{"hpcc_vaisf", HPCC, append(append([]string{}, hpccCal...), vaisf...)},
		{"swift", Swift, swiftCal},
		{"swift_vaisf", Swift, append(append([]string{}, swiftCal...), vaisf...)},
		{"swift_vai_only", Swift, append(append([]string{}, swiftCal...), "vai_enable=1")},
		{"swift_sf_only", Swift, append(append([]string{}, swiftCal...), "vai_sf_acks=30")},
		{"swift ai=26", Swift, append(append([]string{}, swiftCal...), "ai_bytes=26")},
		{"swift_vaisf ai=26", Swift, append(append([]string{}, swiftCal...), append([]string{"ai_bytes=26"}, vaisf...)...)},
		{"swift_vaisf ai=26 fbs0", Swift, append(append([]string{}, swiftCal...), append([]string{"ai_bytes=26", "fs_range_ns=0"}, vaisf...)...)},
		// The paper's settings scaled x1000: target 5 + 2 us/hop (7 ms on the
		// 1-switch path), AI 50 Mbit/s (26 B per 4.16 ms RTT), FBS up to 50
		// packets for plain Swift, no FBS with VAI + SF (VI-B).
		{"paper swift", Swift, append(append([]string{}, swiftCal...), "ai_bytes=26", "base_target_ns=7000000", "fs_max_cwnd_segs=50")},
		{"paper swift_vaisf", Swift, append(append([]string{}, swiftCal...), append([]string{"ai_bytes=26", "base_target_ns=7000000", "fs_range_ns=0"}, vaisf...)...)},
		{"swift_vaisf tgt7ms", Swift, append(append([]string{}, swiftCal...), append([]string{"base_target_ns=7000000"}, vaisf...)...)},
	}
	if only := os.Getenv("CCLAB_REVIEW_ONLY"); only != "" {
		var keep = cases[:0]
		for _, c := range cases {
			if strings.Contains(c.name, only) {
				keep = append(keep, c)
			}
		}
		cases = keep
	}
	for _, c := range cases {
		r := runIncast(t, c.law, c.kv...)
		fmt.Printf("%-24s jain 4/16/64 ms %.2f %.2f %.2f  queue mean %3.0f p99 %3.0f max %3.0f KB  finish spread %4.0f ms\n",
			c.name, r.jain4, r.jain16, r.jain64, r.meanQ/1000, r.qP99/1000, r.qMax/1000, r.spread)
	}
}
