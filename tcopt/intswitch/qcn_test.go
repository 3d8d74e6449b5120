package intswitch

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"cclab/internal/units"
	"cclab/tcopt"
	"cclab/tcopt/agent"
)

// TestQCNCongestionPoint: a TCP flow (cubic, which fills any buffer) from
// snd through s1, whose port toward rcv is shaped to 100 Mbit/s behind a
// 256 KB bfifo, with that port a QCN congestion point (Qeq 20 KB, a sample
// every 100 KB) and the host agent on both ends leaving an empty slot in
// its echoes. The port samples one packet per ~100 KB that entered it;
// its negative feedback rides back on the flow's next ACK through the
// switch, with the Fb the standard's equation gives for the queues the
// records themselves report, and reaches the sender's socket storage once
// each.
func TestQCNCongestionPoint(t *testing.T) { eachMode(t, testQCNCongestionPoint) }

func testQCNCongestionPoint(t *testing.T, mode AttachMode) {
	const (
		rate   = 100e6
		qeq    = 20_000
		sample = 100_000
		size   = 16 << 20
	)
	l := newLine(t, 1, linkOpts{rate: units.Rate(1e9), buffer: 256 << 10})
	l.mode = mode
	l.sh("tc", "-n", l.ns("s1"), "class", "change", "dev", "r1", "parent", "1:", "classid", "1:1",
		"htb", "rate", fmt.Sprintf("%dbit", uint64(rate)), "ceil", fmt.Sprintf("%dbit", uint64(rate)),
		"burst", "64k", "cburst", "64k")
	port := slices.IndexFunc(l.ports, func(p PortConfig) bool { return p.Node == "s1" && p.Iface == "r1" })
	l.ports[port].Rate = units.Rate(rate)
	l.ports[port].QCN = QCN{Qeq: qeq, Sample: sample}
	capt := l.mirrorCapture("snd", "r0") // ACKs as the sender's TCP gets them
	sw := attach(t, l.cfg())
	if ms, err := sw.Markings(); err != nil || ms[port].QCN != (QCN{Qeq: qeq, Sample: sample}) {
		t.Fatalf("port holds %+v (%v), want the congestion point", ms, err)
	}
	ag := attachAgentWith(t, l.id, agent.Options{QCNSlot: true})

	e := transferForEcho(t, ag, l.ns("snd"), l.ns("rcv"), l.rcvAddr, size)
	st, err := sw.Stats()
	if err != nil {
		t.Fatal(err)
	}
	p := st[port]
	var carried uint64
	for _, o := range st {
		carried += o.QCNCarried
	}
	t.Logf("CP: %d B entered, %d samples, %d negative (%d replaced one waiting, %d without data); %d carried on ACKs; sender took %d (newest Fb %d)",
		p.Enqueued, p.QCNSampled, p.QCNFeedback, p.QCNReplaced, p.QCNNoData, carried, e.QCNCount, e.QCNFb)

	// Sampling: one sample per `sample` bytes on average (each interval
	// drawn uniformly from 85..115 %: over ~170 samples the mean is
	// within 1 %).
	if want := float64(p.Enqueued) / sample; math.Abs(float64(p.QCNSampled)-want) > 0.05*want+2 {
		t.Errorf("%d samples for %d B entered, want %.0f +- 5 %%", p.QCNSampled, p.Enqueued, want)
	}
	// The other ports are no congestion points.
	for i, o := range st {
		if i != port && (o.QCNSampled != 0 || o.QCNFeedback != 0) {
			t.Errorf("port %s/%s sampled %d, generated %d: it is no congestion point", o.Node, o.Iface, o.QCNSampled, o.QCNFeedback)
		}
	}
	// Cubic keeps the queue far above Qeq for most of the transfer.
	// The port carries data only (the ACKs leave by the other port).
	if p.QCNFeedback < p.QCNSampled/4 || p.QCNNoData != 0 {
		t.Errorf("%d negative of %d samples (%d without data): cubic's queue is far above Qeq most of the time", p.QCNFeedback, p.QCNSampled, p.QCNNoData)
	}
	// Every feedback not replaced rides back on an ACK (the last may wait
	// for an ACK that never comes), and the sender takes each once.
	if sent := p.QCNFeedback - p.QCNReplaced; carried > sent || carried+2 < sent {
		t.Errorf("%d feedback carried on ACKs of %d generated and not replaced", carried, sent)
	}
	if uint64(e.QCNCount) > carried || float64(e.QCNCount) < 0.95*float64(carried)-2 {
		t.Errorf("the sender took %d feedback records, ACKs carried %d", e.QCNCount, carried)
	}
	if e.QCNFb < 1 || e.QCNFb > tcopt.QCNFbMax || e.QCNKey>>16 != uint32(port) {
		t.Errorf("sender's newest feedback: Fb %d, key %#x; want 1..63 from CP %d", e.QCNFb, e.QCNKey, port)
	}

	// Fb against the equation, for records of consecutive samples (Qold
	// is the earlier one's queue). The records carry Q in 128-byte units:
	// |fb| is off by at most 3 * 128 B, under a quantisation step of
	// 5 Qeq / 63 = 1.6 KB: one step at most.
	byseq := map[uint16]tcopt.QCN{}
	for _, raw := range capt.snapshot() {
		f, ok := parseTCP(raw)
		if !ok || f.src.String() != l.rcvAddr {
			continue
		}
		o, err := tcopt.Parse(tcopt.Find(f.options()))
		if err != nil || !o.Echo {
			continue
		}
		if len(o.QCNs()) > 0 && !f.checksumsOK() {
			t.Errorf("an ACK the switch wrote a QCN record into has a bad checksum")
		}
		for _, q := range o.QCNs() {
			if q.CP != uint16(port) || q.Fb < 1 || q.Fb > tcopt.QCNFbMax {
				t.Errorf("record %+v: not from CP %d or Fb out of range", q, port)
			}
			byseq[q.Seq] = q
		}
	}
	pairs := 0
	for seq, q := range byseq {
		prev, ok := byseq[seq-1]
		if !ok {
			continue
		}
		pairs++
		// |fb| = (Q - Qeq) + 2 (Q - Qold) (fb negative: feedback was sent)
		mag := (float64(q.Qlen) - qeq) + 2*(float64(q.Qlen)-float64(prev.Qlen))
		want := math.Floor(math.Min(mag, 5*qeq) * tcopt.QCNFbMax / (5 * qeq))
		if math.Abs(float64(q.Fb)-want) > 1 {
			t.Errorf("sample %d: Q %d B, Qold %d B: Fb %d, the equation gives %.0f", seq, q.Qlen, prev.Qlen, q.Fb, want)
		}
	}
	t.Logf("%d feedback records captured on ACKs, %d of consecutive samples checked against the equation", len(byseq), pairs)
	if len(byseq) < int(carried)/2 || pairs < 10 {
		t.Errorf("captured %d records (%d pairs) of %d carried: too few to check", len(byseq), pairs, carried)
	}
}
