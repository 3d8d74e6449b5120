package intswitch

import (
	"fmt"
	"math"
	"testing"
	"time"

	"cclab/internal/units"
)

// TestECNMarking: an ECN-capable reno flow into a 100 Mbit/s port builds a
// queue. With a threshold K, packets leaving while more than K bytes are
// queued behind them arrive CE-marked and the others do not (the record
// stamped into the same packet says what the queue was); IP checksums
// stay valid. With marking off, nothing is marked although the queue
// passes K. With RED (Kmin 15 KB, Kmax K), no packet leaving with at most
// Kmin queued is marked, every one leaving above Kmax is, and of those in
// between some are and some are not, as many as their queues make likely.
func TestECNMarking(t *testing.T) {
	const k = 30 << 10
	red := RED{Kmin: 15 << 10, Kmax: k, Pmax: 0.5}
	for _, tc := range []struct {
		name string
		k    units.Size
		red  RED
	}{{"K=30KB", k, RED{}}, {"off", 0, RED{}}, {"RED", 0, red}} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLine(t, 1, linkOpts{rate: units.Rate(1e9), buffer: 256 << 10})
			// The bottleneck: s1's port toward the receiver.
			l.sh("tc", "-n", l.ns("s1"), "class", "change", "dev", "r1", "parent", "1:", "classid", "1:1",
				"htb", "rate", "100mbit", "ceil", "100mbit", "burst", "64k", "cburst", "64k")
			cfg := l.cfg()
			for i := range cfg.Ports {
				cfg.Ports[i].ECNThreshold, cfg.Ports[i].ECNRed = tc.k, tc.red
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
			// The queue must reach the marking: K, or RED's ramp (a
			// reno flow marked on the ramp may stay below Kmax: once the
			// queue peaked at 30208 B against Kmax 30720).
			reach := uint64(k)
			if tc.red.On() {
				reach = uint64(tc.red.Kmin)
			}
			var ce, ect, notECT, above int
			var maxQ uint64
			var ramp redRamp
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
				if q > reach {
					above++
				}
				if f.tos&3 == 0 { // retransmissions are sent without ECT
					notECT++
					continue
				}
				marked := f.tos&3 == 3
				if marked {
					ce++
				} else {
					ect++
				}
				if tc.red.On() {
					if err := ramp.add(tc.red, q, marked); err != nil {
						t.Errorf("frame %d: %v", i, err)
					}
					continue
				}
				if marked && (tc.k == 0 || q+128 <= uint64(tc.k)) {
					t.Errorf("frame %d: CE with %d B queued (K %d)", i, q, tc.k)
				}
				if !marked && tc.k != 0 && q > uint64(tc.k) {
					t.Errorf("frame %d: not marked with %d B queued (K %d)", i, q, tc.k)
				}
			}
			st, err := sw.Stats()
			if err != nil {
				t.Fatal(err)
			}
			marked := portStats(t, st, "s1", "r1").CEMarked
			t.Logf("%d data frames: %d CE, %d ECT, %d not ECT; %d left above %d B; max queue %d B; port marked %d",
				len(frames), ce, ect, notECT, above, reach, maxQ, marked)
			if notECT > len(frames)/10 {
				t.Fatalf("%d of %d frames not ECN-capable: ECN not negotiated?", notECT, len(frames))
			}
			if len(frames) < 1000 || above == 0 {
				t.Fatalf("the queue never passed %d B", reach)
			}
			if (tc.k != 0 || tc.red.On()) && (ce == 0 || ect == 0 || marked < uint64(ce)) {
				t.Errorf("want both marked and unmarked frames, and the port's count (%d) to cover the marks", marked)
			}
			if tc.k == 0 && !tc.red.On() && (ce != 0 || marked != 0) {
				t.Errorf("marking off, yet %d frames CE (port count %d)", ce, marked)
			}
			if tc.red.On() {
				t.Logf("RED: %v", ramp)
				if err := ramp.check(); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// redRamp tallies, per frame, RED's verdicts against the queue stamped in
// the same frame: rounded down to 128 B, so a frame whose 128 B step
// straddles Kmin or Kmax is judged as in between.
type redRamp struct {
	frames, marked     int     // in between Kmin and Kmax
	expected, variance float64 // of the marks in between
}

func (r *redRamp) add(red RED, q uint64, marked bool) error {
	switch {
	case q+128 <= uint64(red.Kmin):
		if marked {
			return fmt.Errorf("CE with %d B queued, at most Kmin %v", q, red.Kmin)
		}
	case q > uint64(red.Kmax):
		if !marked {
			return fmt.Errorf("not marked with %d B queued, above Kmax %v", q, red.Kmax)
		}
	default:
		p := redProbability(red, float64(q)+64) // the middle of its step
		r.frames++
		r.expected += p
		r.variance += p * (1 - p)
		if marked {
			r.marked++
		}
	}
	return nil
}

// check: the marks in between are some, not all, and within five standard
// deviations (plus five frames) of what the stamped queues make likely.
func (r redRamp) check() error {
	if r.frames < 100 {
		return fmt.Errorf("only %d frames left with a queue between Kmin and Kmax", r.frames)
	}
	if r.marked == 0 || r.marked == r.frames {
		return fmt.Errorf("%d of %d frames between Kmin and Kmax marked: want some, not all", r.marked, r.frames)
	}
	if d := math.Abs(float64(r.marked) - r.expected); d > 5*math.Sqrt(r.variance)+5 {
		return fmt.Errorf("%d of %d frames between Kmin and Kmax marked, expected %.0f +- %.0f", r.marked, r.frames, r.expected, math.Sqrt(r.variance))
	}
	return nil
}

func (r redRamp) String() string {
	return fmt.Sprintf("%d of %d frames between Kmin and Kmax marked, expected %.0f +- %.0f", r.marked, r.frames, r.expected, math.Sqrt(r.variance))
}
