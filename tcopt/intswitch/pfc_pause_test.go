package intswitch

import (
	"testing"
	"time"

	"cclab/internal/units"
)

// TestSetPaused: SetPaused writes a port's paused and last_xon_ns, which
// read back as written, and nothing else of its state: a reno flow
// through the port while its state is written 2000 times leaves the
// port's transmitted bytes equal to the qdisc's (a read-modify-write of
// the whole state would lose the increments made between the two). An
// unknown port is an error.
func TestSetPaused(t *testing.T) {
	l := newLine(t, 1, linkOpts{rate: units.Rate(1e9), buffer: 256 << 10})
	sw := attach(t, l.cfg())
	node, iface := l.lastSwitch(), l.lastPort()
	idx := -1
	for i, p := range sw.ports {
		if p.Node == node && p.Iface == iface {
			idx = i
		}
	}
	if idx < 0 {
		t.Fatalf("no port %s/%s", node, iface)
	}
	if err := sw.SetPaused(node, "nosuch", true, 0); err == nil {
		t.Error("SetPaused of an unknown port: no error")
	}
	qd := l.qdiscReader(node, iface)
	base := qd.read(t)
	cg := l.senderCgroup(0)
	l.iperfServer("rcv", l.rcvAddr, 5211)
	cmd := l.iperfClient("snd", cg, l.rcvAddr, 5211, "-C", "reno", "-t", "1")
	for k := uint64(1); k <= 2000; k++ {
		if err := sw.SetPaused(node, iface, k%2 == 1, k); err != nil {
			t.Fatal(err)
		}
		st, err := sw.readStates()
		if err != nil {
			t.Fatal(err)
		}
		if got := st[idx]; got.Paused != uint32(k%2) || got.LastXonNs != k {
			t.Fatalf("after SetPaused(%v, %d): paused %d, last_xon_ns %d", k%2 == 1, k, got.Paused, got.LastXonNs)
		}
		time.Sleep(200 * time.Microsecond)
	}
	l.iperfResult(cmd)
	time.Sleep(200 * time.Millisecond)
	end := qd.read(t)
	st, err := sw.Stats()
	if err != nil {
		t.Fatal(err)
	}
	p := st[idx]
	t.Logf("port %s/%s: transmitted %d B, the qdisc %d B", node, iface, p.Transmitted, end.bytes-base.bytes)
	if p.Transmitted == 0 || p.Transmitted != end.bytes-base.bytes {
		t.Errorf("transmitted %d B, the qdisc sent %d B: the state writes lost counts", p.Transmitted, end.bytes-base.bytes)
	}
}
