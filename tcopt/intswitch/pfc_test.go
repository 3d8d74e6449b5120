package intswitch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"cclab/internal/units"
)

// udpStar is a star of senders a1..aN on 1 Gbit/s links into switch sw
// and its 100 Mbit/s port "out" into rcv, lossless with p.
func udpStar(t *testing.T, senders int, buffer units.Size, p PFC, mode AttachMode, tbf bool) (*star, *Switch) {
	t.Helper()
	s := newStar(t, senders, linkOpts{rate: units.Rate(1e9), buffer: buffer, tbf: tbf},
		linkOpts{rate: units.Rate(portRate), buffer: buffer, tbf: tbf})
	s.mode = mode
	cfg := s.cfg()
	cfg.PFC = p
	sw, err := Attach(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sw.Close() })
	return s, sw
}

// udp starts an iperf3 UDP sender from a<i> to rcv at rate for d (whole
// seconds: iperf3 takes no fraction).
func (s *star) udp(i int, rate string, d time.Duration) *exec.Cmd {
	s.t.Helper()
	port := 5300 + i
	s.iperfServer("rcv", s.rcvAddr, port)
	return s.iperfClient(fmt.Sprintf("a%d", i), s.senderCgroupOnce(), s.rcvAddr, port,
		"-u", "-b", rate, "-l", "1400", "-t", fmt.Sprint(int(d.Seconds())))
}

// senderCgroupOnce is the star's plain sender cgroup, made on first use.
func (s *star) senderCgroupOnce() string {
	if s.cg == "" {
		s.cg = s.senderCgroup(0)
	}
	return s.cg
}

// ingressOf returns the switch's ingress accounting of port sw/iface.
func ingressOf(t *testing.T, ports []PFCPort, iface string) PFCPort {
	t.Helper()
	for _, p := range ports {
		if p.Node == "sw" && p.Iface == iface {
			return p
		}
	}
	t.Fatalf("no PFC port sw/%s", iface)
	return PFCPort{}
}

// portRate is the star's port to the receiver, bits per second.
const portRate = 100e6

// A UDP frame of 1400 bytes of payload, as the qdisc counts it.
const udpFrame = 1400 + 8 + 20 + 14

// TestIngressCounters: three UDP senders at 30, 60 and 60 Mbit/s (150 %)
// into one 100 Mbit/s port whose FIFO (20 MB) does not fill in the 3 s
// they send, so that every byte sent is queued: at every sample the
// per-ingress occupancies sum to the switch's backlog within a packet,
// its used buffer is the qdisc's backlog (read over netlink just before
// and just after it: between the two, within a packet per CPU and what the
// port sends while they are read), the split is the senders' 1:2:2
// at every sample with a queue, and all is 0 once the port drains.
// The same on lossless ports (TBF roots, whose backlog the switch reads as
// it reads HTB's).
func TestIngressCounters(t *testing.T) {
	testIngressCounters(t, AttachTCX, false)
	t.Run("tbf", func(t *testing.T) { testIngressCounters(t, AttachTCX, true) })
}

func testIngressCounters(t *testing.T, mode AttachMode, tbf bool) {
	// Thresholds above the buffer: counting only, no crossing.
	s, sw := udpStar(t, 3, 20_000_000, PFC{Mode: PFCStatic, Xoff: 1 << 30, Xon: 1 << 29}, mode, tbf)
	qd := s.qdiscReader("sw", "out")
	const d = 3 * time.Second
	var cmds []*exec.Cmd
	for i, rate := range []string{"30M", "60M", "60M"} {
		cmds = append(cmds, s.udp(i+1, rate, d))
	}
	share := make([]float64, 3)
	samples := 0
	var worstSum, worstQdisc int64
	var worstRead time.Duration
	// maxRead: the reads of a sample whose used buffer is bounded take at
	// most this long (25 KB at the port's rate).
	const maxRead = 2 * time.Millisecond
	bounded := 0
	deadline := time.Now().Add(d - 300*time.Millisecond)
	time.Sleep(500 * time.Millisecond) // the queue fills
	for time.Now().Before(deadline) {
		t0 := time.Now()
		before := qd.read(t).backlog
		ports, used, err := sw.PFCPorts()
		if err != nil {
			t.Fatal(err)
		}
		after := qd.read(t).backlog
		readFor := time.Since(t0)
		var sum uint64
		occ := make([]uint64, 3)
		for i := range occ {
			occ[i] = uint64(ingressOf(t, ports, fmt.Sprintf("p%d", i+1)).Occupancy)
			sum += occ[i]
		}
		b := used["sw"]
		diff := int64(b.Backlog) - int64(sum)
		if diff < 0 || diff > udpFrame {
			t.Errorf("occupancies %v sum to %d, the switch's backlog is %d", occ, sum, b.Backlog)
		}
		worstSum = max(worstSum, diff)
		// The backlog when the switch was read: at least what was queued
		// before, less what the port can send in the reads' time, and at
		// most what was queued after, plus that (arrivals are bursty: the
		// queue may fall and rise between the two reads). A packet
		// entering reads the backlog before the ones other CPUs are
		// enqueueing join it: a packet per CPU short, at most.
		// Reads stalled for longer (the machine busy) bound nothing.
		if readFor <= maxRead {
			drain := uint64(portRate / 8 * readFor.Seconds())
			slack := uint64(runtime.NumCPU())*udpFrame + drain
			if uint64(b.Used)+slack < before || uint64(b.Used) > after+slack {
				t.Errorf("the switch's used buffer %d, the qdisc's backlog %d before it was read, %d after (%v apart: the port sends %d B in that time)", b.Used, before, after, readFor, drain)
			}
			worstQdisc = max(worstQdisc, int64(max(before, after)-min(before, after)))
			worstRead = max(worstRead, readFor)
			bounded++
		}
		if sum > 500_000 {
			for i, want := range []float64{0.2, 0.4, 0.4} {
				got := float64(occ[i]) / float64(sum)
				if got < want-0.03 || got > want+0.03 {
					t.Errorf("a%d holds %.3f of the queue (%d of %d B), sent %.2f of the load", i+1, got, occ[i], sum, want)
				}
				share[i] += got
			}
			samples++
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, c := range cmds {
		s.iperfResult(c)
	}
	if samples < 50 || bounded < 50 {
		t.Fatalf("%d samples with a queue above 500 KB, %d read within %v", samples, bounded, maxRead)
	}
	t.Logf("%d samples (%d read within %v); worst: sum %d B below the backlog, the qdisc moved %d B while read, the reads took %v", samples, bounded, maxRead, worstSum, worstQdisc, worstRead)
	for i, want := range []float64{0.2, 0.4, 0.4} {
		t.Logf("a%d: %.3f of the queue on average (sent %.1f)", i+1, share[i]/float64(samples), want)
	}
	// Drained (the queue, at most 20 MB, empties in 1.6 s): nothing anywhere.
	time.Sleep(2 * time.Second)
	ports, used, err := sw.PFCPorts()
	if err != nil {
		t.Fatal(err)
	}
	if b := used["sw"]; b.Used != 0 || b.Backlog != 0 || qd.read(t).backlog != 0 {
		t.Errorf("drained: switch %+v, qdisc backlog %d", b, qd.read(t).backlog)
	}
	for _, p := range ports {
		if p.Occupancy != 0 || p.Xoffs != 0 || p.Paused {
			t.Errorf("drained: %s/%s occupancy %d, %d Xoff, paused %v", p.Node, p.Iface, p.Occupancy, p.Xoffs, p.Paused)
		}
	}
}

// TestPFCEventsHysteresis: one UDP sender at 150 Mbit/s into a 100 Mbit/s
// port, on for 1 s and off for 1 s three times, with Xoff 60 KB and
// Xon 30 KB (the FIFO holds 200 KB). Each burst posts exactly one Xoff,
// one packet above Xoff, and each drain one Xon, within a packet below Xon;
// they alternate, in time order, and the switch's counters agree.
func TestPFCEventsHysteresis(t *testing.T) { testPFCEventsHysteresis(t, AttachTCX) }

// The classic build (kernels without tcx) has neither PFC nor TCD: a
// config asking for either is refused before anything loads, and so is
// TCD through SetMarking.
func TestClassicRefusesPFCAndTCD(t *testing.T) {
	l := newLine(t, 1, linkOpts{rate: units.Rate(1e9), buffer: 256 << 10})
	l.mode = AttachClassic
	cfg := l.cfg()
	cfg.PFC = PFC{Mode: PFCStatic, Xoff: 60_000, Xon: 30_000}
	if _, err := Attach(context.Background(), cfg); !errors.Is(err, ErrNeedsTCX) {
		t.Errorf("classic with PFC: %v", err)
	}
	cfg = l.cfg()
	cfg.Ports = append([]PortConfig(nil), cfg.Ports...) // the line's own stay without TCD
	cfg.Ports[0].TCD = TCD{MaxTon: time.Millisecond, Threshold: 30 << 10}
	if _, err := Attach(context.Background(), cfg); !errors.Is(err, ErrNeedsTCX) {
		t.Errorf("classic with TCD: %v", err)
	}
	sw := attach(t, l.cfg())
	if err := sw.SetMarking(Marking{TCD: TCD{MaxTon: time.Millisecond, Threshold: 30 << 10}}); !errors.Is(err, ErrNeedsTCX) {
		t.Errorf("classic SetMarking with TCD: %v", err)
	}
}

func testPFCEventsHysteresis(t *testing.T, mode AttachMode) {
	const xoff, xon, bursts = 60_000, 30_000, 3
	s, sw := udpStar(t, 1, 200_000, PFC{Mode: PFCStatic, Xoff: xoff, Xon: xon}, mode, false)
	ev, err := sw.PFCEvents()
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	for b := 0; b < bursts; b++ {
		s.iperfResult(s.udp(1, "150M", time.Second))
		time.Sleep(time.Second)
	}
	var got []PFCEvent
	for {
		e, err := ev.Read(time.Now().Add(200 * time.Millisecond))
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	if len(got) != 2*bursts {
		t.Fatalf("%d events, want %d: %+v", len(got), 2*bursts, got)
	}
	for k, e := range got {
		t.Logf("%s at %d ns: %s/%s occupancy %d, threshold %d", e.Kind, e.Ns, e.Port.Node, e.Port.Iface, e.Occupancy, e.Threshold)
		want := PFCXoff
		if k%2 == 1 {
			want = PFCXon
		}
		if e.Kind != want || e.Port.Iface != "p1" || e.Port.PeerNode != "a1" {
			t.Errorf("event %d: %s of %s/%s (upstream %s/%s), want %s of sw/p1 from a1", k, e.Kind, e.Port.Node, e.Port.Iface, e.Port.PeerNode, e.Port.PeerIface, want)
		}
		if k > 0 && e.Ns <= got[k-1].Ns {
			t.Errorf("event %d at %d ns, not after the one before (%d)", k, e.Ns, got[k-1].Ns)
		}
		switch e.Kind {
		case PFCXoff:
			if e.Threshold != xoff || e.Occupancy <= xoff || e.Occupancy > xoff+udpFrame {
				t.Errorf("Xoff at occupancy %d, threshold %d: want one packet above %d", e.Occupancy, e.Threshold, xoff)
			}
		case PFCXon:
			if e.Threshold != xon || e.Occupancy > xon || e.Occupancy+2*udpFrame < xon {
				t.Errorf("Xon at occupancy %d, threshold %d: want within a packet below %d", e.Occupancy, e.Threshold, xon)
			}
		}
	}
	ports, _, err := sw.PFCPorts()
	if err != nil {
		t.Fatal(err)
	}
	p := ingressOf(t, ports, "p1")
	if p.Xoffs != bursts || p.Xons != bursts || p.Paused || p.LostEvents != 0 {
		t.Errorf("sw/p1: %d Xoff, %d Xon, paused %v, %d lost; want %d each, not paused", p.Xoffs, p.Xons, p.Paused, p.LostEvents, bursts)
	}
	// The queue sat at the FIFO's 200 KB (no pause acts yet): far above
	// Xoff, which the headroom check would count.
	if p.MaxOver < 100_000 {
		t.Errorf("sw/p1: at most %d above Xoff with a full 200 KB FIFO", p.MaxOver)
	}
}

// TestPFCDynamicThreshold: HPCC's threshold under real load. One UDP
// sender at 150 Mbit/s for 1 s into a 100 Mbit/s port, the switch's
// shared buffer B = 200 KB (its FIFO's limit), alpha 11 %, hysteresis
// 3028 B. With one ingress queue the switch's used buffer is that
// queue, so Xoff comes when it exceeds 0.11 (B - itself), about 19.8 KB,
// and Xon when it falls to that less the hysteresis. The events
// alternate, Xoff first and Xon last (iperf3's bursty start can cross
// twice), and each threshold is alpha of what was free then (within two
// packets of the occupancy's own account). No controller acts on the
// Xoff, so the queue fills to the FIFO's limit B while paused, where the
// dynamic threshold is 0: the overrun counted (MaxOver) is B less the
// threshold the pause was posted at, within two packets, not B (which
// the current threshold gave: 200 492 B).
func TestPFCDynamicThreshold(t *testing.T) {
	const b, alpha, hyst = 200_000, 0.11, 3028
	s, sw := udpStar(t, 1, b, PFC{Mode: PFCDynamic, Alpha: alpha, Buffer: b, Hysteresis: hyst}, AttachTCX, false)
	ev, err := sw.PFCEvents()
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Close()
	s.iperfResult(s.udp(1, "150M", time.Second))
	time.Sleep(500 * time.Millisecond)
	var got []PFCEvent
	for {
		e, err := ev.Read(time.Now().Add(200 * time.Millisecond))
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	if len(got) < 2 || len(got)%2 != 0 {
		t.Fatalf("%d events, want Xoff, Xon pairs: %+v", len(got), got)
	}
	for k, e := range got {
		if want := []PFCKind{PFCXoff, PFCXon}[k%2]; e.Kind != want {
			t.Errorf("event %d is %s, want %s", k, e.Kind, want)
		}
		occ := float64(e.Occupancy)
		want := alpha * (b - occ)
		if e.Kind == PFCXon {
			want -= hyst
		}
		t.Logf("%s: occupancy %d, threshold %d (alpha of the free buffer%s: %.0f)", e.Kind, e.Occupancy, e.Threshold,
			map[PFCKind]string{PFCXon: " less the hysteresis"}[e.Kind], want)
		if d := float64(e.Threshold) - want; d > alpha*2*udpFrame+1 || d < -alpha*2*udpFrame-1 {
			t.Errorf("%s threshold %d, want %.0f within two packets' share", e.Kind, e.Threshold, want)
		}
		switch e.Kind {
		case PFCXoff:
			if e.Occupancy <= e.Threshold || e.Occupancy > e.Threshold+udpFrame {
				t.Errorf("Xoff at occupancy %d, threshold %d: want within a packet above", e.Occupancy, e.Threshold)
			}
		case PFCXon:
			if e.Occupancy > e.Threshold || e.Occupancy+2*udpFrame < e.Threshold {
				t.Errorf("Xon at occupancy %d, threshold %d: want within two packets below", e.Occupancy, e.Threshold)
			}
		}
	}
	lo, hi := uint64(math.MaxUint64), uint64(0)
	for _, e := range got {
		if e.Kind == PFCXoff {
			lo, hi = min(lo, uint64(e.Threshold)), max(hi, uint64(e.Threshold))
		}
	}
	ports, _, err := sw.PFCPorts()
	if err != nil {
		t.Fatal(err)
	}
	over := uint64(ingressOf(t, ports, "p1").MaxOver)
	t.Logf("most above the Xoff posted: %d B (B %d, Xoff thresholds %d-%d)", over, b, lo, hi)
	// A packet is counted as it reaches the queue and uncounted when
	// the full FIFO drops it: a packet per CPU above B at most.
	slack := uint64(runtime.NumCPU()) * udpFrame
	if over+2*udpFrame < b-hi || over > b-lo+slack {
		t.Errorf("max over %d B: want the full FIFO less the Xoff's threshold, %d-%d B", over, b-hi-2*udpFrame, b-lo+slack)
	}
}

// Headroom is the unit's pfc_headroom (docs/lossless.md's table): 1 ms at
// 100 Mbit/s and 1 us at 100 Gbit/s are 25 000 B of flight, 1 us at 400
// Gbit/s 100 000 B, plus two frames.
func TestPFCHeadroomGo(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		rate units.Rate
		want units.Size
	}{
		{time.Millisecond, units.Rate(100e6), 28_028},
		{time.Microsecond, units.Rate(100e9), 28_028},
		{time.Microsecond, units.Rate(400e9), 103_028},
		{0, units.Rate(100e6), 3028},
	} {
		if got := Headroom(c.d, c.rate); got != c.want {
			t.Errorf("headroom of %v at %v: %v, want %v", c.d, c.rate, got, c.want)
		}
	}
}
