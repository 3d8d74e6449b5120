package intswitch

import (
	"testing"
	"time"

	"cclab/internal/units"
)

// TestECNMarking: an ECN-capable reno flow into a 100 Mbit/s port builds a
// queue. With a threshold K, packets leaving while more than K bytes are
// queued behind them arrive CE-marked and the others do not (the record
// stamped into the same packet says what the queue was); IP checksums
// stay valid. With marking off, nothing is marked although the queue
// passes K.
func TestECNMarking(t *testing.T) {
	const k = 30 << 10
	for _, tc := range []struct {
		name string
		k    units.Size
	}{{"K=30KB", k}, {"off", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLine(t, 1, linkOpts{rate: units.Rate(1e9), buffer: 256 << 10})
			// The bottleneck: s1's port toward the receiver.
			l.sh("tc", "-n", l.ns("s1"), "class", "change", "dev", "r1", "parent", "1:", "classid", "1:1",
				"htb", "rate", "100mbit", "ceil", "100mbit", "burst", "64k", "cburst", "64k")
			cfg := l.cfg()
			for i := range cfg.Ports {
				cfg.Ports[i].ECNThreshold = tc.k
				if cfg.Ports[i].Iface == "r1" {
					cfg.Ports[i].Rate = units.Rate(100e6)
				}
			}
			l.in("snd", "sysctl", "-qw", "net.ipv4.tcp_ecn=1")
			capt := l.mirrorCapture("rcv", l.rcvIface())
			sw := attach(t, cfg)
			cg := l.senderCgroup(5)
			l.iperfServer("rcv", l.rcvAddr, 5201)
			l.iperfResult(l.iperfClient("snd", cg, l.rcvAddr, 5201, "-C", "reno", "-t", "1.5"))

			frames := dataFrames(capt.waitFor(time.Second, func([][]byte) bool { return false }), l.sndAddr, l.rcvAddr)
			var ce, ect, notECT, above int
			var maxQ uint64
			for i, f := range frames {
				if !f.checksumsOK() {
					t.Fatalf("frame %d: bad checksum", i)
				}
				o, ok := findOpt(f.options())
				if !ok || o.hops() != 1 {
					t.Fatalf("frame %d: no record", i)
				}
				q := o.recs[0].qlen // the queue behind the packet, rounded down to 128 B
				maxQ = max(maxQ, q)
				if q > k {
					above++
				}
				switch f.tos & 3 {
				case 0: // retransmissions are sent without ECT
					notECT++
				case 3:
					ce++
					if tc.k == 0 || q+128 <= uint64(tc.k) {
						t.Errorf("frame %d: CE with %d B queued (K %d)", i, q, tc.k)
					}
				default:
					ect++
					if tc.k != 0 && q > uint64(tc.k) {
						t.Errorf("frame %d: not marked with %d B queued (K %d)", i, q, tc.k)
					}
				}
			}
			st, err := sw.Stats()
			if err != nil {
				t.Fatal(err)
			}
			marked := portStats(t, st, "s1", "r1").CEMarked
			t.Logf("%d data frames: %d CE, %d ECT, %d not ECT; %d left above K=%d; max queue %d B; port marked %d",
				len(frames), ce, ect, notECT, above, k, maxQ, marked)
			if notECT > len(frames)/10 {
				t.Fatalf("%d of %d frames not ECN-capable: ECN not negotiated?", notECT, len(frames))
			}
			if len(frames) < 1000 || above == 0 {
				t.Fatalf("the queue never passed %d B", k)
			}
			if tc.k != 0 && (ce == 0 || ect == 0 || marked < uint64(ce)) {
				t.Errorf("want both marked and unmarked frames, and the port's count (%d) to cover the marks", marked)
			}
			if tc.k == 0 && (ce != 0 || marked != 0) {
				t.Errorf("marking off, yet %d frames CE (port count %d)", ce, marked)
			}
		})
	}
}
