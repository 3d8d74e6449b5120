package agent

import (
	"io"
	"net"
	"os"
	"testing"

	"cclab/internal/nsexec"
	"cclab/tcopt/internal/pkt"
)

// warmConn is a connection across a 2-namespace path, with this process in
// the agent's cgroup, that has carried n bytes, and a capture on the
// receiver's interface: the start of the tests that inject segments into
// a live connection.
type warmConn struct {
	a      *Agent
	p      *path
	capt   *pkt.Capture
	c, srv *net.TCPConn
	cport  uint16 // the sender's port
}

func newWarmConn(t *testing.T, port, n int) *warmConn {
	t.Helper()
	a, id := attach(t)
	w := &warmConn{a: a, p: newPath(t, id, pathConfig{gso: true})}
	if err := a.AddProcess(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if err := nsexec.Do(w.p.rcv, func() (err error) { w.capt, err = pkt.Listen("r0", 256); return }); err != nil {
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
