package intswitch

import (
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cclab/internal/units"
	"cclab/tcopt/agent"
)

// setPFC writes a port's PFC state (port_state's paused and last_xon_ns)
// as the pause controller does (SetPaused).
func setPFC(t *testing.T, s *Switch, node, iface string, paused bool, lastXonNs uint64) {
	t.Helper()
	if err := s.SetPaused(node, iface, paused, lastXonNs); err != nil {
		t.Fatal(err)
	}
}

// monoNs is CLOCK_MONOTONIC, the programs' bpf_ktime_get_ns.
func monoNs(t *testing.T) uint64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		t.Fatal(err)
	}
	return uint64(ts.Nano())
}

// TestTCDMarking: a real switch with TCD on (max(T_on) 500 ms, K 30 KB,
// a step ECN profile at the same K) and an ECN-capable reno flow building
// a queue at its 100 Mbit/s port. Every stamped option is INT v1.
// Paused (written into the port's state as the PFC controller would),
// the port is undetermined: packets leaving above K carry U and are never
// CE-marked, packets at or below K carry neither. Resumed (paused 0,
// last Xon now), U goes on for max(T_on), then the port is congested and
// CE-marks instead: polled with their times, the port's U counter grows
// only before last Xon + max(T_on), its CE counter only after. The tcx
// build: the classic one has no TCD (TestClassicRefusesPFCAndTCD).
func TestTCDMarking(t *testing.T) { testTCDMarking(t, AttachTCX) }

func testTCDMarking(t *testing.T, mode AttachMode) {
	const k = 30 << 10
	const maxTon = 500 * time.Millisecond
	l := newLine(t, 1, linkOpts{rate: units.Rate(1e9), buffer: 256 << 10})
	l.mode = mode
	l.sh("tc", "-n", l.ns("s1"), "class", "change", "dev", "r1", "parent", "1:", "classid", "1:1",
		"htb", "rate", "100mbit", "ceil", "100mbit", "burst", "64k", "cburst", "64k")
	cfg := l.cfg()
	for i := range cfg.Ports {
		cfg.Ports[i].ECNThreshold = k
		cfg.Ports[i].TCD = TCD{MaxTon: maxTon, Threshold: k}
		if cfg.Ports[i].Iface == "r1" {
			cfg.Ports[i].Rate = units.Rate(100e6)
		}
	}
	l.in("snd", "sysctl", "-qw", "net.ipv4.tcp_ecn=1")
	capt := l.mirrorCapture("rcv", l.rcvIface()) // before the classic build's filters
	sw := attach(t, cfg)
	cg := l.senderCgroup(5)

	// Paused: undetermined above K.
	setPFC(t, sw, "s1", "r1", true, 0)
	l.iperfServer("rcv", l.rcvAddr, 5201)
	l.iperfResult(l.iperfClient("snd", cg, l.rcvAddr, 5201, "-C", "reno", "-t", "1"))
	frames := dataFrames(capt.waitFor(time.Second, func([][]byte) bool { return false }), l.sndAddr, l.rcvAddr)
	var above, ue, ce int
	for i, f := range frames {
		o, ok := findOpt(f.options())
		if !ok || o.hops() != 1 || o.version() != 1 {
			t.Fatalf("frame %d: option %+v, want v1 with one record", i, o)
		}
		q := o.recs[0].qlen // rounded down to 128 B
		if f.tos&3 == 3 {
			ce++
			t.Errorf("frame %d: CE at a paused port (queue %d B)", i, q)
		}
		if o.ue() {
			ue++
		}
		switch {
		case q > k && !o.ue():
			t.Errorf("frame %d: no U leaving a paused port with %d B queued (K %d)", i, q, k)
		case q+128 <= k && o.ue():
			t.Errorf("frame %d: U with %d B queued, at most K %d", i, q, k)
		}
		if q > k {
			above++
		}
	}
	st, err := sw.Stats()
	if err != nil {
		t.Fatal(err)
	}
	p := portStats(t, st, "s1", "r1")
	t.Logf("paused: %d data frames, %d left above K, %d with U, %d CE; port: %d U, %d CE", len(frames), above, ue, ce, p.UEMarked, p.CEMarked)
	if above == 0 || ue == 0 || p.UEMarked < uint64(ue) || p.CEMarked != 0 {
		t.Fatalf("want frames above K, all with U and counted, and no CE")
	}

	// Resumed now: U for max(T_on), then CE.
	type sample struct {
		at     uint64
		ue, ce uint64
	}
	u0, c0 := p.UEMarked, p.CEMarked
	l.iperfServer("rcv", l.rcvAddr, 5202)
	cmd := l.iperfClient("snd", cg, l.rcvAddr, 5202, "-C", "reno", "-t", "2")
	time.Sleep(200 * time.Millisecond) // the queue builds
	xon := monoNs(t)
	setPFC(t, sw, "s1", "r1", false, xon)
	samples := []sample{{at: xon, ue: u0, ce: c0}}
	for len(samples) < 100 {
		time.Sleep(15 * time.Millisecond)
		st, err := sw.Stats()
		if err != nil {
			t.Fatal(err)
		}
		now := monoNs(t)
		p := portStats(t, st, "s1", "r1")
		samples = append(samples, sample{at: now, ue: p.UEMarked, ce: p.CEMarked})
		if time.Duration(now-xon) > maxTon+700*time.Millisecond {
			break
		}
	}
	l.iperfResult(cmd)
	end := xon + uint64(maxTon)
	var ueBefore, ceAfter uint64
	for i := 1; i < len(samples); i++ {
		a, b := samples[i-1], samples[i]
		// Marks counted in (a.at, b.at]: U needs some of it before end, CE some after.
		if b.ue > a.ue {
			if a.at >= end {
				t.Errorf("%d U marks between %v and %v after the Xon: past max(T_on)", b.ue-a.ue,
					time.Duration(a.at-xon), time.Duration(b.at-xon))
			}
			ueBefore += b.ue - a.ue
		}
		if b.ce > a.ce {
			if b.at <= end {
				t.Errorf("%d CE marks between %v and %v after the Xon: within max(T_on)", b.ce-a.ce,
					time.Duration(a.at-xon), time.Duration(b.at-xon))
			}
			ceAfter += b.ce - a.ce
		}
	}
	t.Logf("resumed: %d U marks within max(T_on), %d CE marks after it", ueBefore, ceAfter)
	if ueBefore == 0 || ceAfter == 0 {
		t.Errorf("want U marks after the Xon and CE marks once max(T_on) passed")
	}
}

// TestTCDEchoThroughHostAgent: the whole way of U, on a real switch with
// TCD on and the real host agent on both ends: a port undetermined
// (paused, written as the PFC controller would) stamps U, the receiver's
// agent echoes it, and the sender's socket storage has EchoUE, which the
// laws' glue turns into LAW_ACK_UE. Never paused, the same transfer's
// echoes never carry it.
func TestTCDEchoThroughHostAgent(t *testing.T) {
	const k = 15 << 10
	l := newLine(t, 1, linkOpts{rate: units.Rate(1e9), buffer: 256 << 10})
	l.sh("tc", "-n", l.ns("s1"), "class", "change", "dev", "r1", "parent", "1:", "classid", "1:1",
		"htb", "rate", "100mbit", "ceil", "100mbit", "burst", "64k", "cburst", "64k")
	cfg := l.cfg()
	for i := range cfg.Ports {
		cfg.Ports[i].TCD = TCD{MaxTon: 500 * time.Millisecond, Threshold: k}
		if cfg.Ports[i].Iface == "r1" {
			cfg.Ports[i].Rate = units.Rate(100e6)
		}
	}
	sw := attach(t, cfg)
	ag := attachAgent(t, l.id)
	for _, paused := range []bool{false, true} {
		setPFC(t, sw, "s1", "r1", paused, 0)
		var mu sync.Mutex
		seen, withUE := map[uint32]bool{}, map[uint32]bool{}
		transferWatching(t, ag, l.ns("snd"), l.ns("rcv"), l.rcvAddr, 4<<20, func(e agent.Echo) {
			mu.Lock()
			defer mu.Unlock()
			seen[e.Count] = true
			if e.Flags&agent.EchoUE != 0 {
				withUE[e.Count] = true
			}
		})
		st, err := sw.Stats()
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		t.Logf("paused %v: %d echoes watched, %d with U; port: %d U marks", paused, len(seen), len(withUE), portStats(t, st, "s1", "r1").UEMarked)
		switch {
		case len(seen) < 10:
			t.Errorf("paused %v: only %d echoes watched", paused, len(seen))
		case paused && len(withUE) == 0:
			t.Errorf("paused: no echo reached the sender with U")
		case !paused && len(withUE) != 0:
			t.Errorf("never paused: %d echoes with U", len(withUE))
		}
		mu.Unlock()
	}
}
