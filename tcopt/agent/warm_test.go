package agent

import (
	"context"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cclab/internal/nsexec"
	"cclab/tcopt/internal/pkt"
)

// warmConn is a connection across a 2-namespace path, with this process in
// the agent's cgroup, that has carried n bytes, and a capture on one end's
// interface: the start of the tests that inject segments into a live
// connection.
type warmConn struct {
	a      *Agent
	p      *path
	capt   *pkt.Capture
	c, srv *net.TCPConn
	port   uint16 // the receiver's port
	cport  uint16 // the sender's port
}

// captureAt says where a warm connection captures.
type captureAt int

const (
	atReceiver captureAt = iota // r0: what the receiver sends and gets
	atSender                    // s0: what reaches the sender
)

func newWarmConn(t *testing.T, port, n int, at captureAt) *warmConn {
	t.Helper()
	return newWarmConnWith(t, port, n, at, Options{})
}

// newWarmConnWith is newWarmConn with the agent's options.
func newWarmConnWith(t *testing.T, port, n int, at captureAt, opts Options) *warmConn {
	t.Helper()
	a, id := attachWith(t, opts)
	w := &warmConn{a: a, p: newPath(t, id, pathConfig{gso: true}), port: uint16(port)}
	if err := a.AddProcess(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	ns, dev := w.p.rcv, "r0"
	if at == atSender {
		ns, dev = w.p.snd, "s0"
	}
	if err := nsexec.Do(ns, func() (err error) { w.capt, err = pkt.Listen(dev, 256); return }); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.capt.Close() })
	ln := listen(t, w.p.rcv, w.p.rcvIP, port)
	w.c = dial(t, w.p.snd, w.p.rcvIP, port)
	srv, err := ln.AcceptTCP()
	if err != nil {
		t.Fatal(err)
	}
	w.srv = srv
	t.Cleanup(func() { srv.Close() })
	if _, err := w.c.Write(make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(srv, make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	w.cport = uint16(w.c.LocalAddr().(*net.TCPAddr).Port)
	return w
}

// quietAck waits until the receiver's ACKs stop moving (the same ack
// number in five looks 20 ms apart, with settled true at each when given)
// and returns its last segment: the sequence numbers to inject with.
func (w *warmConn) quietAck(ctx context.Context, t *testing.T, settled func() bool) pkt.Segment {
	t.Helper()
	var last pkt.Segment
	quiet := 0
	err := w.capt.Wait(ctx, func(frames []pkt.Frame) bool {
		var seg pkt.Segment
		for _, f := range frames {
			if s, err := pkt.Parse(f.IP()); err == nil && s.Src == w.p.rcvIP && s.SPort == w.port {
				seg = s
			}
		}
		ok := settled == nil || settled()
		if ok && seg.Ack != 0 && seg.Ack == last.Ack {
			quiet++
		} else {
			quiet = 0
		}
		last = seg
		time.Sleep(20 * time.Millisecond)
		return quiet >= 5
	})
	if err != nil {
		t.Fatalf("the receiver's ACKs never went quiet: %v", err)
	}
	return last
}

// rawSocket opens a raw IPv4 socket in ns to inject segments with; it is
// closed when the test ends.
func rawSocket(t *testing.T, ns string) int {
	t.Helper()
	var raw int
	if err := nsexec.Do(ns, func() (err error) {
		raw, err = unix.Socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_RAW)
		return err
	}); err != nil {
		t.Fatalf("raw socket: %v", err)
	}
	t.Cleanup(func() { unix.Close(raw) })
	return raw
}
