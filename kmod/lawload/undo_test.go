package lawload

import (
	"context"
	"fmt"
	"os/exec"
	"testing"
	"time"
)

// A timeout the kernel finds spurious is undone: the ACKs were late, not
// lost, so the window goes back to what it was (Reno's undo_cwnd: the
// window before the loss). The glue's loss envelope follows: undo_cwnd
// restores it as it was (without that: cwnd 4 after the undo, 127
// before). The ACK path stalls for 500 ms (its port's HTB rate dropped to
// 2 kbit/s, one ACK per ~350 ms, none lost: a lower rate leaves a token
// debt of seconds); the sender times out, retransmits, and the ACKs that
// then arrive echo timestamps from before the retransmission
// (TcpExtTCPLossUndo). Kernel Reno runs the same path as the control.
func TestLossEnvelopeUndo(t *testing.T) {
	const stallAt, stallFor = 1500 * time.Millisecond, 500 * time.Millisecond
	r := loadForTest(t, "dctcp")
	for _, cc := range []string{"reno", r.Name} {
		n := newTestNet(t, testRate, testBuf, false)
		// The ACK path: r's port toward a.
		run(t, "tc", "-n", n.r, "qdisc", "add", "dev", "ra", "root", "handle", "1:", "htb", "default", "1")
		run(t, "tc", "-n", n.r, "class", "add", "dev", "ra", "parent", "1:", "classid", "1:1", "htb", "rate", "10gbit")
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			setRate := func(rate string) error {
				out, err := exec.Command("tc", "-n", n.r, "class", "change", "dev", "ra", "parent", "1:", "classid", "1:1",
					"htb", "rate", rate, "ceil", rate, "burst", "1600", "cburst", "1600").CombinedOutput()
				if err != nil {
					return fmt.Errorf("tc class change %s: %v: %s", rate, err, out)
				}
				return nil
			}
			select {
			case <-ctx.Done():
				done <- nil
				return
			case <-time.After(stallAt):
			}
			if err := setRate("2kbit"); err != nil {
				done <- err
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(stallFor):
			}
			done <- setRate("10gbit")
		}()
		f := n.flows(t, context.Background(), cc, 1, 0, 3*time.Second)[0]
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		ns := netstat(t, n.a)
		timeouts, undos := ns["TcpExt.TCPTimeouts"], ns["TcpExt.TCPLossUndo"]
		// The window before the stall, and after it: the first sample in
		// the Open state from 20 ms after the stall's planned end (the
		// Loss state itself lasts less than a 10 ms sample when undone
		// early; the stall ends later than planned by the tc commands'
		// run time, longer on a loaded machine), within 300 ms of it.
		var before, after uint32
		var afterAt time.Duration
		for _, x := range f.samples {
			if x.at < stallAt {
				before = x.cwnd
			}
			if x.at >= stallAt+stallFor+20*time.Millisecond && x.caState == 0 {
				if x.at < stallAt+stallFor+300*time.Millisecond {
					after, afterAt = x.cwnd, x.at
				}
				break
			}
		}
		t.Logf("%s: %d timeouts, %d undone; cwnd %d before the stall, %d at %v",
			cc, timeouts, undos, before, after, afterAt.Round(time.Millisecond))
		if timeouts == 0 || undos == 0 {
			t.Fatalf("%s: no timeout undone (%d timeouts, %d undos)", cc, timeouts, undos)
		}
		if float64(after) < 0.9*float64(before) {
			t.Errorf("%s: cwnd %d after the undone timeout, %d before", cc, after, before)
		}
	}
}
