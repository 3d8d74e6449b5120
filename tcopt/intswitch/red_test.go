package intswitch

import (
	"fmt"
	"os/exec"
	"slices"
	"testing"
	"time"

	"cclab/internal/quiettest"
	"cclab/internal/units"
)

// A standing queue for the marking tests: snd - s1 - rcv, with s1's port
// toward rcv (r1) shaped to 100 Mbit/s behind a bfifo of standingBuffer
// bytes, and an ECN-capable (ECT(0)) UDP flow of 150 Mbit/s into it that
// does not back off when marked, so the queue stays near the buffer's
// limit (iperf3 sends in bursts: 40-50 KB, 45 KB in the median).
const (
	standingBuffer = 50 << 10
	standingRate   = 100e6
	// floodFrame is one UDP packet of the flood as the qdisc counts it:
	// 1400 B of payload, UDP, IPv4 and Ethernet headers.
	floodFrame = 1400 + 8 + 20 + 14
)

type standing struct {
	*line
	cg   string
	port int // index of s1/r1 among the ports
}

func newStanding(t *testing.T, mode AttachMode) *standing {
	l := newLine(t, 1, linkOpts{rate: units.Rate(1e9), buffer: 256 << 10})
	l.mode = mode
	l.sh("tc", "-n", l.ns("s1"), "class", "change", "dev", "r1", "parent", "1:", "classid", "1:1",
		"htb", "rate", fmt.Sprintf("%dbit", uint64(standingRate)), "ceil", fmt.Sprintf("%dbit", uint64(standingRate)),
		"burst", "64k", "cburst", "64k")
	l.sh("tc", "-n", l.ns("s1"), "qdisc", "change", "dev", "r1", "parent", "1:1", "handle", "10:", "bfifo",
		"limit", fmt.Sprint(standingBuffer))
	for i := range l.ports {
		if l.ports[i].Iface == "r1" {
			l.ports[i].Rate = units.Rate(standingRate)
		}
	}
	port := slices.IndexFunc(l.ports, func(p PortConfig) bool { return p.Node == "s1" && p.Iface == "r1" })
	return &standing{line: l, cg: l.senderCgroup(0), port: port}
}

// flood starts the UDP flow for d; wait for it with iperfResult.
func (s *standing) flood(d time.Duration) *exec.Cmd {
	s.iperfServer("rcv", s.rcvAddr, 5201)
	return s.iperfClient("snd", s.cg, s.rcvAddr, 5201, "-u", "-b", "150M", "-l", "1400",
		"-S", "2", "-t", fmt.Sprintf("%.1f", d.Seconds()))
}

// window is what the bottleneck port did over a measuring window.
type window struct {
	pkts, marked uint64
	queues       []float64 // the qdisc's backlog, sampled over netlink
}

func (w window) fraction() float64 { return float64(w.marked) / float64(max(w.pkts, 1)) }

// expected is the mean, over the sampled queues, of the probability a
// packet leaving that queue has of being marked under r. The switch judges
// a packet by the bytes queued behind it: the backlog less the packet.
func (w window) expected(r RED) float64 {
	var sum float64
	for _, q := range w.queues {
		sum += redProbability(r, q-floodFrame)
	}
	return sum / float64(max(len(w.queues), 1))
}

func redProbability(r RED, q float64) float64 {
	switch {
	case q <= float64(r.Kmin):
		return 0
	case q > float64(r.Kmax):
		return 1
	}
	return r.Pmax * (q - float64(r.Kmin)) / float64(r.Kmax-r.Kmin)
}

// measure counts, over d, the port's transmitted and CE-marked packets and
// samples its queue from the kernel's own statistics every 2 ms.
func (s *standing) measure(t *testing.T, sw *Switch, d time.Duration) window {
	t.Helper()
	qd := s.qdiscReader("s1", "r1")
	read := func() PortStats {
		st, err := sw.Stats()
		if err != nil {
			t.Fatal(err)
		}
		return st[s.port]
	}
	a := read()
	var w window
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(2 * time.Millisecond) {
		w.queues = append(w.queues, float64(qd.read(t).backlog))
	}
	b := read()
	w.pkts, w.marked = b.TransmittedPkt-a.TransmittedPkt, b.CEMarked-a.CEMarked
	return w
}

func (w window) String() string {
	return fmt.Sprintf("%d packets, %d CE (%.3f); queue median %.0f B (%.0f..%.0f B, %d samples)", w.pkts, w.marked,
		w.fraction(), percentile(w.queues, 0.5), percentile(w.queues, 0.05), percentile(w.queues, 0.95), len(w.queues))
}

// redShareOK says whether the share of packets marked over w, under a
// queue that stays between r's Kmin and Kmax, is some but not all, and
// within 20 % (and half a percent) of what r gives the measured queue:
// generous, since the queue is sampled, not read per packet.
func redShareOK(w window, r RED) error {
	exp, got := w.expected(r), w.fraction()
	if w.marked == 0 || w.marked == w.pkts {
		return fmt.Errorf("%d of %d packets marked: want some, not all", w.marked, w.pkts)
	}
	if got < 0.8*exp-0.005 || got > 1.2*exp+0.005 {
		return fmt.Errorf("%.3f of the packets marked, want about %.3f", got, exp)
	}
	return nil
}

// standingErr says whether the flood kept the queue standing near the
// buffer's limit over the window, and carried enough packets to judge.
func standingErr(w window) error {
	if w.pkts < 3000 || percentile(w.queues, 0.05) < 0.7*standingBuffer {
		return fmt.Errorf("no standing queue at %d B: %v", standingBuffer, w)
	}
	return nil
}

// standingOK fails the test unless the queue stood (standingErr).
func standingOK(t *testing.T, w window) {
	t.Helper()
	if err := standingErr(w); err != nil {
		t.Fatal(err)
	}
}

// TestREDMarking: under a standing queue of about 45 KB, RED profiles
// whose Kmin and Kmax bracket it (two, of different slopes, so that the
// shape of the ramp is tested, not one point of it) mark a share of the
// packets that lies strictly between none and all and near
// Pmax*(q-Kmin)/(Kmax-Kmin) for the measured queue; one whose Kmax lies
// below it marks nearly every packet. (The step marking is TestECNMarking's, and TestSetMarking's.)
func TestREDMarking(t *testing.T) {
	eachMode(t, func(t *testing.T, mode AttachMode) {
		for _, tc := range []struct {
			name string
			red  RED
		}{
			{"between", RED{Kmin: 20_000, Kmax: 80_000, Pmax: 0.2}},
			{"between-steep", RED{Kmin: 30_000, Kmax: 60_000, Pmax: 0.5}},
			{"above-kmax", RED{Kmin: 5_000, Kmax: 20_000, Pmax: 0.2}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s := newStanding(t, mode)
				cfg := s.cfg()
				for i := range cfg.Ports {
					cfg.Ports[i].ECNRed = tc.red
				}
				sw := attach(t, cfg)
				// The flood holds the queue only while the CPUs are
				// the test's: a window with CPU time stolen by the
				// hypervisor is measured again, not counted.
				quiettest.Retry(t, quiettest.Policy{Failures: 2, Tries: 3}, func(int) error {
					c := s.flood(2500 * time.Millisecond)
					time.Sleep(500 * time.Millisecond)
					w := s.measure(t, sw, 1500*time.Millisecond)
					s.iperfResult(c)
					if err := standingErr(w); err != nil {
						return err
					}
					t.Logf("%+v: %v; expected %.3f", tc.red, w, w.expected(tc.red))
					if tc.name == "above-kmax" {
						if got := w.fraction(); got < 0.97 {
							return fmt.Errorf("queue above Kmax: %.3f of the packets marked, want nearly all", got)
						}
						return nil
					}
					return redShareOK(w, tc.red)
				})
			})
		}
	})
}

// TestSetMarking: SetMarking changes the marking of a running switch under
// a standing queue of about 45 KB: a step above the queue marks nothing,
// RED between Kmin and Kmax a share near its profile, a step below the
// queue every packet, and no marking nothing again; Markings reads back
// what the kernel holds, RED's thresholds scaled to the port's rate. A bad
// profile is refused and changes nothing.
func TestSetMarking(t *testing.T) {
	s := newStanding(t, AttachTCX)
	cfg := s.cfg()
	for i := range cfg.Ports {
		cfg.Ports[i].ECNThreshold = 200 << 10
	}
	sw := attach(t, cfg)
	c := s.flood(7 * time.Second)
	time.Sleep(500 * time.Millisecond)
	// Thresholds for 1 Gbit/s, scaled to the 100 Mbit/s bottleneck:
	// Kmin 20 KB and Kmax 80 KB there.
	red := RED{Kmin: 200_000, Kmax: 800_000, Pmax: 0.2, Rate: units.Rate(1e9)}
	redAtPort := RED{Kmin: 20_000, Kmax: 80_000, Pmax: 0.2}
	for _, step := range []struct {
		name string
		m    Marking
		want func(w window) error
	}{
		{"step above the queue", Marking{Threshold: 200 << 10}, func(w window) error {
			if w.marked != 0 {
				return fmt.Errorf("%d marked", w.marked)
			}
			return nil
		}},
		{"RED", Marking{RED: red}, func(w window) error { return redShareOK(w, redAtPort) }},
		{"step below the queue", Marking{Threshold: 10 << 10}, func(w window) error {
			if w.fraction() < 0.97 {
				return fmt.Errorf("%.3f marked, want nearly all", w.fraction())
			}
			return nil
		}},
		{"off", Marking{}, func(w window) error {
			if w.marked != 0 {
				return fmt.Errorf("%d marked", w.marked)
			}
			return nil
		}},
	} {
		if err := sw.SetMarking(step.m); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		ms, err := sw.Markings()
		if err != nil {
			t.Fatal(err)
		}
		want := step.m
		if step.m.RED.On() {
			want = Marking{RED: redAtPort}
		}
		if ms[s.port] != want {
			t.Errorf("%s: the kernel holds %+v, want %+v", step.name, ms[s.port], want)
		}
		time.Sleep(100 * time.Millisecond) // packets judged before the change are gone
		w := s.measure(t, sw, 1000*time.Millisecond)
		standingOK(t, w)
		t.Logf("%s: %v", step.name, w)
		if err := step.want(w); err != nil {
			t.Errorf("%s: %v", step.name, err)
		}
	}
	// Kmin 10 B and Kmax 11 B for 1 Gbit/s both become 1 B at 100 Mbit/s:
	// a profile that collapses on any port is refused, and nothing changes.
	bad := Marking{RED: RED{Kmin: 10, Kmax: 11, Pmax: 0.2, Rate: units.Rate(1e9)}}
	if err := sw.SetMarking(bad); err == nil {
		t.Error("SetMarking took a RED profile whose thresholds meet at 100 Mbit/s")
	}
	if ms, err := sw.Markings(); err != nil || ms[s.port] != (Marking{}) {
		t.Errorf("after a refused profile the port holds %+v (%v), want no marking", ms[s.port], err)
	}
	s.iperfResult(c)
}
