package lawload

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"

	"cclab/internal/nsexec"
)

// After a retransmission timeout the glue's loss envelope recovers as the
// kernel's Reno (and DCTCP) do: slow start from the kernel's window up to
// ssthresh, half the window before the timeout, in a few round trips
// (measured: within one 10 ms sample for both). The glue used to restart
// at 2 segments and grow one per round trip, through the whole Loss
// recovery too: 200-210 ms to get back on this path. A 500 ms black-out
// of the bottleneck's input forces the timeout; kernel Reno runs the same
// path as the control.
func TestLossEnvelopeAfterTimeout(t *testing.T) {
	r := loadForTest(t, "dctcp")
	for _, cc := range []string{"reno", r.Name} {
		n := newTestNet(t, testRate, testBuf, false)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- blackout(ctx, n.r, "ra", 1500*time.Millisecond, 500*time.Millisecond) }()
		f := n.flows(t, context.Background(), cc, 1, 0, 3*time.Second)[0]
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		s := f.samples
		loss := -1
		for i := range s {
			if s[i].caState == 4 { // TCP_CA_Loss
				loss = i
				break
			}
		}
		if loss < 0 {
			t.Fatalf("%s: no timeout (no sample in the Loss state)", cc)
		}
		ssthresh := s[loss].ssthresh
		res := -1
		for i := loss + 1; i < len(s); i++ {
			if s[i].acked > s[i-1].acked {
				res = i
				break
			}
		}
		if res < 0 {
			t.Fatalf("%s: delivery never resumed after the timeout", cc)
		}
		// ssthresh as in force then: a loss in the slow start that follows
		// sets a new one (and the window with it).
		up := -1
		for i := res; i < len(s); i++ {
			if s[i].cwnd >= s[i].ssthresh {
				up = i
				break
			}
		}
		var took time.Duration
		if up < 0 {
			took = s[len(s)-1].at - s[res].at
		} else {
			took = s[up].at - s[res].at
		}
		t.Logf("%s: timeout at %v with ssthresh %d; delivery resumed at %v with cwnd %d; cwnd reached ssthresh (as then) after %v (reached: %v)",
			cc, s[loss].at.Round(time.Millisecond), ssthresh, s[res].at.Round(time.Millisecond), s[res].cwnd, took, up >= 0)
		if up < 0 || took > 100*time.Millisecond {
			t.Errorf("%s: the window took %v (reached: %v) to regain ssthresh after the timeout", cc, took, up >= 0)
			for _, x := range s[loss-1:] {
				t.Logf("  %v: state %d cwnd %d ssthresh %d acked %d", x.at.Round(time.Millisecond), x.caState, x.cwnd, x.ssthresh, x.acked)
			}
		}
	}
}

// blackout drops every packet arriving on dev in namespace ns for dur,
// starting after wait (a tcx program returning TCX_DROP: this kernel has
// no gact action).
func blackout(ctx context.Context, ns, dev string, wait, dur time.Duration) error {
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:         ebpf.SchedCLS,
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 2), asm.Return()}, // TCX_DROP
		License:      "GPL",
	})
	if err != nil {
		return fmt.Errorf("load drop program: %w", err)
	}
	defer prog.Close()
	select {
	case <-ctx.Done():
		return fmt.Errorf("black-out: flow ended before it began")
	case <-time.After(wait):
	}
	var l link.Link
	err = nsexec.Do(ns, func() error {
		ifc, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		l, err = link.AttachTCX(link.TCXOptions{Interface: ifc.Index, Program: prog, Attach: ebpf.AttachTCXIngress})
		return err
	})
	if err != nil {
		return fmt.Errorf("attach drop program to %s/%s: %w", ns, dev, err)
	}
	defer l.Close()
	select {
	case <-ctx.Done():
	case <-time.After(dur):
	}
	return nil
}
