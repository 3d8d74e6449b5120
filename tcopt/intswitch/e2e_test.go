package intswitch

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"cclab/internal/units"
)

// The test's own reading of the wire format (tcopt/README.md), kept
// independent of the code under test.
type testRec struct {
	rate    uint8
	qlen    uint64 // bytes
	tx      uint64 // bytes mod 32 MiB
	ts      uint64 // ns mod ~67 ms
	nonzero bool
}

const (
	tsWrap = (1 << 18) * 256
	txWrap = (1 << 18) * 128
)

func decodeRec(p []byte) testRec {
	var v uint64
	for _, b := range p[:7] {
		v = v<<8 | uint64(b)
	}
	return testRec{
		rate: uint8(v >> 51), qlen: (v >> 36 & (1<<15 - 1)) * 128,
		tx: (v >> 18 & (1<<18 - 1)) * 128, ts: (v & (1<<18 - 1)) * 256,
		nonzero: v != 0,
	}
}

// intOption finds the INT option in a TCP option area: its header byte
// and slot records.
type testOpt struct {
	slots int
	hdr   byte
	recs  []testRec
}

func findOpt(opts []byte) (testOpt, bool) {
	for i := 0; i < len(opts); {
		switch opts[i] {
		case 0:
			return testOpt{}, false
		case 1:
			i++
			continue
		}
		if i+1 >= len(opts) || opts[i+1] < 2 || i+int(opts[i+1]) > len(opts) {
			return testOpt{}, false
		}
		l := int(opts[i+1])
		if opts[i] == 253 && l >= 5 && binary.BigEndian.Uint16(opts[i+2:]) == 0xCC1A {
			o := testOpt{slots: (l - 5) / 7, hdr: opts[i+4]}
			for s := 0; s < o.slots; s++ {
				o.recs = append(o.recs, decodeRec(opts[i+5+7*s:]))
			}
			return o, true
		}
		i += l
	}
	return testOpt{}, false
}

// The header byte: v0 VV E O HHHH, v1 VV E O U HHH (TCD).
func (o testOpt) version() int { return int(o.hdr >> 6) }
func (o testOpt) hops() int {
	if o.version() == 1 {
		return int(o.hdr & 0x07)
	}
	return int(o.hdr & 0x0f)
}
func (o testOpt) overflow() bool { return o.hdr&0x10 != 0 }
func (o testOpt) ue() bool       { return o.version() == 1 && o.hdr&0x08 != 0 }

// dataFrames returns the captured TCP data segments from src to dst.
func dataFrames(frames [][]byte, src, dst string) []tcpFrame {
	var out []tcpFrame
	for _, f := range frames {
		t, ok := parseTCP(f)
		if ok && t.payload > 0 && t.src.String() == src && t.dst.String() == dst {
			out = append(out, t)
		}
	}
	return out
}

func attach(t *testing.T, cfg Config) *Switch {
	t.Helper()
	s, err := Attach(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close switch: %v", err)
		}
	})
	return s
}

// checkPath asserts that every data frame carries an INT option with
// `want` records written in path order (timestamps increasing hop by hop),
// the unused slots untouched, the overflow flag as expected, and valid
// checksums.
// lead is how far any port's transmit clock ran ahead of its dequeues
// (PortStats.ClockLeadMax): a record is stamped with the time its port's
// link finishes the packet, so the next hop, not busy, may stamp up to
// that much earlier.
func checkPath(t *testing.T, frames []tcpFrame, slots, want int, overflow bool, rateCode uint8, lead time.Duration) {
	t.Helper()
	if len(frames) < 20 {
		t.Fatalf("only %d data frames captured", len(frames))
	}
	for i, f := range frames {
		if !f.checksumsOK() {
			t.Fatalf("frame %d: bad checksum", i)
		}
		o, ok := findOpt(f.options())
		if !ok {
			t.Fatalf("frame %d: no INT option in %x", i, f.options())
		}
		if o.slots != slots || o.hops() != want || o.overflow() != overflow || o.hdr&0xe0 != 0 {
			t.Fatalf("frame %d: slots %d hops %d overflow %v header %#x, want slots %d hops %d overflow %v",
				i, o.slots, o.hops(), o.overflow(), o.hdr, slots, want, overflow)
		}
		for h := 0; h < slots; h++ {
			r := o.recs[h]
			if h >= want {
				if r.nonzero {
					t.Fatalf("frame %d: slot %d beyond the path was written: %+v", i, h, r)
				}
				continue
			}
			if r.rate != rateCode {
				t.Fatalf("frame %d hop %d: rate code %d, want %d", i, h, r.rate, rateCode)
			}
			if h > 0 {
				// A later hop stamps later: within half a wrap of the
				// 67 ms timestamp, or earlier by no more than the
				// clocks' lead (plus a unit). A reversed pair reads as
				// nearly a whole wrap; a CPU stalled between two hops
				// (stolen time, a softirq backlog) can put milliseconds
				// between them (5.1 ms seen once).
				d := (r.ts - o.recs[h-1].ts + tsWrap) % tsWrap
				if !pathOrder(uint32(r.ts), uint32(o.recs[h-1].ts), tsWrap/2, lead) {
					t.Fatalf("frame %d: hop %d stamped %d ns after hop %d: not in path order", i, h, d, h-1)
				}
			}
		}
	}
}

// TestThreeSwitchPath: three switches, three records in path order, every
// rewrite with correct checksums (offloads off, the receiver verifies), and
// the records' txBytes agreeing with the ports' counters.
func TestThreeSwitchPath(t *testing.T) { eachMode(t, testThreeSwitchPath) }

func testThreeSwitchPath(t *testing.T, mode AttachMode) {
	l := newLine(t, 3, linkOpts{rate: units.Rate(1e9), buffer: 256 << 10})
	l.mode = mode
	capt := l.mirrorCapture("rcv", l.rcvIface())
	sw := attach(t, l.cfg())
	if sw.Mode() != mode {
		t.Fatalf("attached with %s, asked for %s", sw.Mode(), mode)
	}
	frames, stats := sendThroughLine(t, l, capt, sw, "2M", 1000, 3, false)

	// The forward ports are s1/r1, s2/r2, s3/r3; each stamped every frame.
	last := frames[len(frames)-1]
	o, _ := findOpt(last.options())
	for h := 0; h < 3; h++ {
		st := portStats(t, stats, lineNode(h+1, 3), "r"+string(rune('1'+h)))
		if st.Stamped < uint64(len(frames)) {
			t.Errorf("hop %d: stamped %d < %d frames", h, st.Stamped, len(frames))
		}
		t.Logf("hop %d: %d of %d packets late", h, st.Late, st.TransmittedPkt)
		if st.Late*20 > st.TransmittedPkt {
			t.Errorf("hop %d: %d of %d packets stamped without their dequeue snapshot", h, st.Late, st.TransmittedPkt)
		}
		// The last data frame's txBytes: the port's count then, which the
		// few packets after it (ACK-less tail, FIN) exceed by little.
		ahead := (st.Transmitted%txWrap - o.recs[h].tx + txWrap) % txWrap
		if ahead > 64<<10 {
			t.Errorf("hop %d: record txBytes %d is %d bytes behind the port's %d", h, o.recs[h].tx, ahead, st.Transmitted)
		}
	}
}

// sendThroughLine sends size (iperf's -n) from snd to rcv across line l
// and checks that the data frames the capture saw (waiting for minFrames)
// carry want records of 1 Gbit/s ports in path order, overflow flagged or
// not; it returns those frames and the ports' stats.
func sendThroughLine(t *testing.T, l *line, capt *capture, sw *Switch, size string, minFrames, want int, overflow bool) ([]tcpFrame, []PortStats) {
	t.Helper()
	cg := l.senderCgroup(5)
	l.iperfServer("rcv", l.rcvAddr, 5201)
	l.iperfResult(l.iperfClient("snd", cg, l.rcvAddr, 5201, "-n", size))
	frames := dataFrames(capt.waitFor(2*time.Second, func(f [][]byte) bool {
		return len(dataFrames(f, l.sndAddr, l.rcvAddr)) > minFrames
	}), l.sndAddr, l.rcvAddr)
	stats, err := sw.Stats()
	if err != nil {
		t.Fatal(err)
	}
	checkPath(t, frames, 5, want, overflow, 8, clockLead(stats))
	return frames, stats
}

func portStats(t testing.TB, stats []PortStats, node, iface string) PortStats {
	t.Helper()
	for _, s := range stats {
		if s.Node == node && s.Iface == iface {
			return s
		}
	}
	t.Fatalf("no port %s/%s", node, iface)
	return PortStats{}
}

// clockLead is the furthest any port's clock ran ahead of its dequeues.
func clockLead(stats []PortStats) time.Duration {
	var lead uint64
	for _, p := range stats {
		lead = max(lead, p.ClockLeadMax)
	}
	return time.Duration(lead)
}

// pathOrder reports whether a hop stamped at ts came after the hop before
// it, stamped at prev: later by at most within, or earlier by no more
// than the ports' clock lead (checkPath) and a timestamp unit.
func pathOrder(ts, prev uint32, within, lead time.Duration) bool {
	d := (uint64(ts) - uint64(prev) + tsWrap) % tsWrap
	if d > tsWrap/2 {
		return time.Duration(tsWrap-d) <= lead+256
	}
	if d == 0 {
		return lead > 0 // the same tick: only when a clock ran ahead
	}
	return time.Duration(d) <= within
}

// TestOverflowSixSwitches: a path longer than the option holds fills all
// five slots, sets the overflow flag and writes nothing more.
func TestOverflowSixSwitches(t *testing.T) {
	l := newLine(t, 6, linkOpts{rate: units.Rate(1e9), buffer: 256 << 10})
	capt := l.mirrorCapture("rcv", l.rcvIface())
	sw := attach(t, l.cfg())
	frames, stats := sendThroughLine(t, l, capt, sw, "1M", 500, 5, true)
	if st := portStats(t, stats, "s6", "r6"); st.Overflowed < uint64(len(frames)) || st.Stamped != 0 {
		t.Errorf("s6: overflowed %d stamped %d, want >= %d and 0", st.Overflowed, st.Stamped, len(frames))
	}
}
