package law

import (
	"fmt"
	"testing"
)

// A closed loop: flows running a law through one bottleneck port, in a
// discrete-time model (1 us steps). The port is a FIFO; each packet is
// stamped at its dequeue with the INT record a switch writes then (queue
// left behind it, bytes transmitted, time), marked ECN if the queue it
// joined was above a threshold, and acknowledged one base RTT after its
// dequeue. Laws that work keep the link busy with a short queue; a wrong
// sign or unit shows up as an idle link or a standing queue.
type loopFlow struct {
	ctl      *Controller
	out      Out
	credit   float64 // bytes the host may send now (pacing / NIC rate)
	sent     uint64
	acked    uint64
	acks     []loopPkt // dequeued, waiting for their ACK time
	echoSeq  uint32
	ackBytes uint64 // delivered in the measured window
}

type loopPkt struct {
	flow                *loopFlow
	end                 float64 // the port's byte count when its last byte leaves
	sentAt, ackAt       float64 // us
	qlen, tx, dequeueNs uint64
	ecn                 bool
	bytesSeq            uint64
}

type loopResult struct {
	util, meanQueue float64 // over the second half
	share           []float64
}

func runLoop(t *testing.T, l Law, rateMbps uint32, nflows int, kv ...string) loopResult {
	t.Helper()
	const (
		tauUs = 50.0
		mss   = 1448
		steps = 40000
	)
	rateBpus := float64(rateMbps) / 8         // bytes per us
	kBytes := 5000 * float64(rateMbps) / 1000 // ECN threshold, 5 KB per Gbit/s
	switch l {
	case PowerTCP, ThetaPowerTCP, HPCC:
		// Their window capped at the line-rate window HostBw * tau, as the
		// papers' implementations cap the rate at line rate.
		kv = append([]string{fmt.Sprintf("host_bw_mbps=%d", rateMbps), "max_cwnd_bytes=0"}, kv...)
	case Swift:
		kv = append([]string{fmt.Sprintf("host_bw_mbps=%d", rateMbps)}, kv...)
	}
	p := paramsWith(t, l, kv...)
	flows := make([]*loopFlow, nflows)
	for i := range flows {
		c, out, err := NewController(p, 0, mss)
		if err != nil {
			t.Fatal(err)
		}
		flows[i] = &loopFlow{ctl: c, out: out}
	}
	var fifo []loopPkt
	var q, tx, enq float64 // queued bytes, bytes sent by the port, bytes ever queued
	var busy, qsum float64
	measured := 0
	for step := 0; step < steps; step++ {
		now := float64(step)
		second := step >= steps/2
		// Senders: window and pacing (or the NIC rate) permitting.
		for _, f := range flows {
			rate := rateBpus
			if f.out.PacingRate != PacingNone {
				rate = min(rate, float64(f.out.PacingRate)/1e6)
			}
			f.credit = min(f.credit+rate, 2*mss)
			for f.credit >= mss && f.sent+mss <= f.acked+f.out.CwndBytes {
				f.credit -= mss
				f.sent += mss
				enq += mss
				fifo = append(fifo, loopPkt{flow: f, end: enq, sentAt: now,
					ecn: q > kBytes, bytesSeq: f.sent})
				q += mss
			}
		}
		// The port: serve a step's bytes, stamp what leaves.
		served := serveStep(&fifo, &q, &tx, rateBpus, now, tauUs)
		if second {
			busy += served / rateBpus
			qsum += q
			measured++
		}
		// ACKs due now.
		for _, f := range flows {
			for len(f.acks) > 0 && f.acks[0].ackAt <= now {
				pk := f.acks[0]
				f.acks = f.acks[1:]
				f.acked = pk.bytesSeq
				f.echoSeq++
				a := Ack{NowNs: uint64(now * 1000), AckedBytes: mss, MSS: mss,
					CwndSegs: f.out.CwndSegs, SndNxt: uint32(f.sent), SndUna: uint32(f.acked),
					RTTus: uint32(now - pk.sentAt + 0.5),
					Echo: &Echo{ArrivedNs: uint64(now * 1000), Count: f.echoSeq, Hops: []Hop{{
						Qlen: uint32(pk.qlen), TxBytes: uint32(pk.tx % TxWrap),
						Ts: uint32(pk.dequeueNs % TsWrap), RateMbps: rateMbps}}}}
				if pk.ecn {
					a.ECEBytes, a.ECE = mss, true
				}
				out, err := f.ctl.OnAck(a)
				if err != nil {
					t.Fatal(err)
				}
				f.out = out
				if second {
					f.ackBytes += mss
				}
			}
		}
	}
	res := loopResult{util: busy / float64(measured), meanQueue: qsum / float64(measured)}
	var total float64
	for _, f := range flows {
		total += float64(f.ackBytes)
	}
	for _, f := range flows {
		res.share = append(res.share, float64(f.ackBytes)/total)
	}
	return res
}

// Two flows start together at line rate (twice a 10 Gbit/s link, base RTT
// 50 us + 1.2 us serialisation + up to 1 us of model step, so the laws are
// given tau = 52 us): every law must settle to a busy link with a short
// queue, and neither flow may starve. (At 1 Gbit/s this path's BDP is 4
// segments and window granularity dominates; the laws are compared at 10.)
func TestClosedLoopBottleneck(t *testing.T) {
	const bdp = 62500
	cases := []struct {
		law      Law
		kv       []string
		minUtil  float64
		maxQueue float64
	}{
		{PowerTCP, nil, 0.9, bdp / 2},
		{ThetaPowerTCP, nil, 0.9, bdp / 2},
		// HPCC aims at eta = 95 % of the link.
		{HPCC, nil, 0.88, bdp / 2},
		{HPCC, []string{"vai_enable=1", "vai_sf_acks=30"}, 0.88, bdp / 2},
		// Swift's target must sit above the base RTT.
		{Swift, []string{"base_target_ns=55000"}, 0.9, bdp / 2},
		{Swift, []string{"base_target_ns=55000", "vai_enable=1", "vai_sf_acks=30"}, 0.9, bdp / 2},
		// DCTCP holds its queue around the marking threshold (50 KB).
		{DCTCP, nil, 0.9, bdp},
	}
	gap := map[string]float64{}
	for _, c := range cases {
		kv := c.kv
		if c.law != DCTCP {
			kv = append([]string{"base_rtt_ns=52000"}, kv...)
		}
		r := runLoop(t, c.law, 10000, 2, kv...)
		t.Logf("%-14s %v: utilisation %.3f, mean queue %.0f B, shares %.2f", c.law, c.kv, r.util, r.meanQueue, r.share)
		if r.util < c.minUtil {
			t.Errorf("%s %v: link %.1f %% busy, want >= %.0f %%", c.law, c.kv, 100*r.util, 100*c.minUtil)
		}
		if r.meanQueue > c.maxQueue {
			t.Errorf("%s %v: mean queue %.0f B, want < %.0f", c.law, c.kv, r.meanQueue, c.maxQueue)
		}
		for i, s := range r.share {
			if s < 0.25 {
				t.Errorf("%s %v: flow %d got %.1f %% of the link", c.law, c.kv, i, 100*s)
			}
		}
		gap[fmt.Sprintf("%s %v", c.law, c.kv)] = max(r.share[0], r.share[1]) - min(r.share[0], r.share[1])
	}
	// Variable AI and Sampling Frequency exist to converge to fairness
	// faster: on HPCC the two flows' shares must end closer.
	plain, vai := gap["hpcc []"], gap["hpcc [vai_enable=1 vai_sf_acks=30]"]
	if vai >= plain {
		t.Errorf("HPCC share gap %.2f with VAI+SF, %.2f without: want VAI+SF fairer", vai, plain)
	}
}

// Eight flows at once (eight times the link): the laws must still settle
// to a busy link and a short queue. PowerTCP is left out: in this model
// it keeps a standing queue of about one BDP with 8-16 flows (61-81 KB,
// utilisation 97-98 %), an open question (README, "Known behaviour").
func TestClosedLoopEightFlows(t *testing.T) {
	const bdp = 62500
	cases := []struct {
		law      Law
		kv       []string
		minUtil  float64
		maxQueue float64
	}{
		{ThetaPowerTCP, []string{"base_rtt_ns=52000"}, 0.9, bdp / 2},
		{HPCC, []string{"base_rtt_ns=52000"}, 0.88, bdp / 2},
		{Swift, []string{"base_rtt_ns=52000", "base_target_ns=55000"}, 0.9, bdp / 2},
		{DCTCP, nil, 0.9, bdp},
	}
	for _, c := range cases {
		r := runLoop(t, c.law, 10000, 8, c.kv...)
		t.Logf("%-14s: utilisation %.3f, mean queue %.0f B, shares %.2f", c.law, r.util, r.meanQueue, r.share)
		if r.util < c.minUtil || r.meanQueue > c.maxQueue {
			t.Errorf("%s: utilisation %.3f, mean queue %.0f B; want >= %.2f and < %.0f", c.law, r.util, r.meanQueue, c.minUtil, c.maxQueue)
		}
		for i, s := range r.share {
			if s < 0.05 {
				t.Errorf("%s: flow %d got %.1f %% of the link", c.law, i, 100*s)
			}
		}
	}
}

// serveStep is the model's port for one step: it serves up to rate bytes
// of the queue q, and each packet whose last byte has left (tx) carries
// the INT record of the dequeue (queue and transmitted bytes, time) and
// has its ACK due tau after now. It returns the bytes served.
func serveStep(fifo *[]loopPkt, q, tx *float64, rate, now, tau float64) float64 {
	served := min(*q, rate)
	*q -= served
	*tx += served
	for len(*fifo) > 0 && (*fifo)[0].end <= *tx {
		pk := (*fifo)[0]
		*fifo = (*fifo)[1:]
		pk.qlen, pk.tx = uint64(*q), uint64(*tx)
		pk.dequeueNs = uint64(now * 1000)
		pk.ackAt = now + tau
		pk.flow.acks = append(pk.flow.acks, pk)
	}
	return served
}
