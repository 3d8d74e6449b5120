package law

import "testing"

const noClamp = 1 << 20

// Fast recovery halves the window in force, holds it through recovery,
// then grows it one segment per window of acknowledged segments until the
// law's own window is below the envelope.
func TestGlueFastRecovery(t *testing.T) {
	var g LossEnvelope
	if got := g.Apply(100, 1, CAOpen, noClamp); got != 100 {
		t.Fatalf("no loss: window %d, want the law's 100", got)
	}
	g.Start(CAOpen, CARecovery, 100, 50)
	for i := 0; i < 30; i++ {
		if got := g.Apply(120, 1, CARecovery, noClamp); got != 50 {
			t.Fatalf("in recovery: window %d, want half of 100", got)
		}
	}
	// Open again: 50 acknowledged segments make the envelope 51.
	var got uint32
	for i := 0; i < 50; i++ {
		got = g.Apply(120, 1, CAOpen, noClamp)
	}
	if got != 51 {
		t.Errorf("after one window of ACKs: %d, want 51 (one segment per window)", got)
	}
	// The law drops below the envelope: it ends.
	if got := g.Apply(40, 1, CAOpen, noClamp); got != 40 {
		t.Errorf("law below the envelope: %d, want the law's 40", got)
	}
	if on, _ := g.Active(); on {
		t.Error("envelope still active once the law is below it")
	}
}

// A timeout restarts from the kernel's window and slow-starts up to its
// ssthresh; an undo restores the envelope before the loss (none here).
func TestGlueTimeoutAndUndo(t *testing.T) {
	var g LossEnvelope
	g.Start(CAOpen, CALoss, 1, 40)
	if got := g.Apply(200, 0, CALoss, noClamp); got != CwndMin {
		t.Fatalf("after the timeout: %d, want the floor %d", got, CwndMin)
	}
	w := uint32(CwndMin)
	for i := 0; i < 10 && w < 40; i++ { // slow start: doubles per window
		w2 := g.Apply(200, w, CALoss, noClamp)
		if w2 != min(2*w, 40) {
			t.Fatalf("slow start from %d: %d, want %d", w, w2, min(2*w, 40))
		}
		w = w2
	}
	if w != 40 {
		t.Fatalf("slow start ended at %d, want ssthresh 40", w)
	}
	g.Undo()
	if on, _ := g.Active(); on {
		t.Error("undo of a loss from Open left an envelope")
	}
	if got := g.Apply(200, 1, CAOpen, noClamp); got != 200 {
		t.Errorf("after undo: %d, want the law's 200", got)
	}
}

// The window floor and the socket's clamp bound whatever the law says.
func TestGlueClamp(t *testing.T) {
	var g LossEnvelope
	for _, c := range []struct{ law, clamp, want uint32 }{{0, noClamp, CwndMin}, {1, noClamp, CwndMin}, {500, 300, 300}, {7, noClamp, 7}} {
		if got := g.Apply(uint64(c.law), 1, CAOpen, c.clamp); got != c.want {
			t.Errorf("law %d clamp %d: %d, want %d", c.law, c.clamp, got, c.want)
		}
	}
	if Ssthresh(3) != CwndMin || Ssthresh(100) != 50 {
		t.Errorf("ssthresh(3) %d ssthresh(100) %d", Ssthresh(3), Ssthresh(100))
	}
}

// An unpaced socket's rate is the kernel's tcp_update_pacing_rate(): the
// window over the smoothed RTT, 2x in slow start and 1.2x after.
func TestGlueUnpacedRate(t *testing.T) {
	const srtt = 12000 << 3 // 12 ms
	cases := []struct {
		name                          string
		mss, cwnd, inflight, ssthresh uint32
		srtt8                         uint32
		want                          uint64
	}{
		// 100 segments per 12 ms: 12.07 MB/s, x1.2 after slow start.
		{"congestion avoidance", 1448, 100, 90, 150, srtt, 1448 * 100 * 1000 / 12 * 12 / 10},
		{"slow start", 1448, 100, 90, 0x7fffffff, srtt, 1448 * 100 * 1000 / 12 * 2},
		{"more in flight than the window", 1448, 100, 140, 150, srtt, 1448 * 140 * 1000 / 12 * 12 / 10},
		{"no RTT sample", 1448, 10, 0, 0x7fffffff, 0, ^uint64(0)},
		// Loopback's MSS and a window beyond 16 bits: no overflow.
		{"64 KB segments, a huge window", 65483, 1 << 30, 0, 0, 8, 65483 * 0xffff * 1000000 * 12 / 10},
	}
	for _, c := range cases {
		got := UnpacedRate(c.mss, c.cwnd, c.inflight, c.ssthresh, c.srtt8)
		if diff := int64(got - c.want); diff < -1 || diff > 1 {
			t.Errorf("%s: %d B/s, want %d", c.name, got, c.want)
		}
	}
}

// The per-ACK input both builds hand the law: the socket's values, the
// ECE flag consumed once (its bytes are the ACK's), saturation, no RTT.
func TestGlueAckInput(t *testing.T) {
	s := SocketACK{NowNs: 7e9, AckedBytes: 2896, SndUna: 1000, SndNxt: 9000, CwndSegs: 10, MSS: 1448, RTTus: 85, CwndLimited: true}
	a, ece := AckInput(s, true)
	want := Ack{NowNs: 7e9, AckedBytes: 2896, ECEBytes: 2896, CwndSegs: 10, MSS: 1448, SndNxt: 9000, SndUna: 1000, RTTus: 85, ECE: true}
	if a != want || ece {
		t.Errorf("ECE ACK: %+v (ECE left %v), want %+v and the flag consumed", a, ece, want)
	}
	a, _ = AckInput(s, false)
	if a.ECE || a.ECEBytes != 0 {
		t.Errorf("ACK without ECE: %+v, want no ECE bytes", a)
	}
	s.AckedBytes, s.RTTus, s.CwndLimited = 1<<33, -1, false
	if a, _ = AckInput(s, false); a.AckedBytes != 1<<32-1 || a.RTTus != 0 || !a.NotCwndLimited {
		t.Errorf("huge ACK, no RTT sample, not window-limited: %+v", a)
	}
	s.RTTus = 1 << 40
	if a, _ = AckInput(s, false); a.RTTus != 1<<32-1 {
		t.Errorf("RTT of 2^40 us: %d, want it saturated", a.RTTus)
	}
}

// TCD's UE reaches the law only from an echo with U that was written
// (count > 0); the overflow flag is not U.
func TestGlueEchoUE(t *testing.T) {
	for _, c := range []struct {
		name string
		e    *Echo
		want bool
	}{
		{"no echo", nil, false},
		{"echo with U", &Echo{Count: 3, UE: true}, true},
		{"echo without U", &Echo{Count: 3}, false},
		{"overflow only", &Echo{Count: 3, Overflow: true}, false},
		{"never written", &Echo{UE: true}, false},
	} {
		if got := EchoUE(c.e); got != c.want {
			t.Errorf("%s: UE %v, want %v", c.name, got, c.want)
		}
	}
}

// The receiver's exact CE echo (RFC 8257 3.2): a change of state with a
// delayed ACK pending first acknowledges the earlier segments with the old
// state, up to the rcv_nxt before this segment; any change acknowledges at
// once; no change does neither.
func TestGlueCEEcho(t *testing.T) {
	var e CEEcho
	if st := e.Segment(false, false, 1000); st.Flush || st.AckNow {
		t.Errorf("first unmarked segment: %+v, want nothing", st)
	}
	if st := e.Segment(false, true, 2448); st.Flush || st.AckNow {
		t.Errorf("unmarked again, delayed ACK pending: %+v, want nothing (the delayed ACK echoes the same)", st)
	}
	st := e.Segment(true, true, 3896)
	if want := (CEStep{Flush: true, FlushCE: false, FlushRcvNxt: 2448, AckNow: true}); st != want {
		t.Errorf("CE after unmarked, delayed ACK pending: %+v, want %+v", st, want)
	}
	if st := e.Segment(true, false, 5344); st.Flush || st.AckNow {
		t.Errorf("CE again: %+v, want nothing", st)
	}
	st = e.Segment(false, false, 6792)
	if !st.AckNow || st.Flush {
		t.Errorf("unmarked after CE, nothing pending: %+v, want an immediate ACK only", st)
	}
	st = e.Segment(true, true, 8240)
	if !st.Flush || st.FlushCE || st.FlushRcvNxt != 6792 || !st.AckNow {
		t.Errorf("CE after unmarked at 6792, pending: %+v, want the earlier ACK up to 6792 unmarked", st)
	}
	st = e.Segment(false, true, 9688)
	if !st.Flush || !st.FlushCE || st.FlushRcvNxt != 8240 {
		t.Errorf("unmarked after CE at 8240, pending: %+v, want the earlier ACK up to 8240 with CE", st)
	}
}
