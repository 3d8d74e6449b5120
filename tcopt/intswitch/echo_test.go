package intswitch

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"cclab/internal/nsexec"
	"cclab/internal/runid"
	"cclab/internal/units"
	"cclab/tcopt"
	"cclab/tcopt/agent"
)

// TestEchoThroughHostAgent: with the real host agent (tcopt/agent) on both
// ends, the three records the switches stamp on a 3-switch path come back
// to the sender's socket in the receiver's echo, in path order, and agree
// with what arrived at the receiver.
func TestEchoThroughHostAgent(t *testing.T) { eachMode(t, testEchoThroughHostAgent) }

func testEchoThroughHostAgent(t *testing.T, mode AttachMode) {
	l := newLine(t, 3, linkOpts{rate: units.Rate(1e9), buffer: 256 << 10})
	l.mode = mode
	capt := l.mirrorCapture("rcv", l.rcvIface())
	sw := attach(t, l.cfg())
	ag := attachAgent(t, l.id)

	e := transferForEcho(t, ag, l.ns("snd"), l.ns("rcv"), l.rcvAddr, 2<<20)
	t.Logf("echo #%d: %d hops, flags %#x: %+v", e.Count, e.NHops, e.Flags, e.Hop[:e.NHops])
	if e.NHops != 3 || e.Flags&0x10 != 0 {
		t.Fatalf("echo has %d hops, flags %#x; want 3 and no overflow", e.NHops, e.Flags)
	}
	st, err := sw.Stats()
	if err != nil {
		t.Fatal(err)
	}
	for h := 0; h < 3; h++ {
		if e.Hop[h].RateMbps != 1000 {
			t.Errorf("hop %d: rate %d Mbit/s", h, e.Hop[h].RateMbps)
		}
		if h > 0 && !pathOrder(e.Hop[h].TS, e.Hop[h-1].TS, 5*time.Millisecond, clockLead(st)) {
			t.Errorf("hop %d stamped %d ns after hop %d: not path order (clock lead %v)", h,
				tcopt.TSDelta(e.Hop[h].TS, e.Hop[h-1].TS), h-1, clockLead(st))
		}
	}
	// The echoed records are records that arrived at the receiver (on a
	// data segment or the FIN, which carries a forward option too); the
	// capture may still be reading the last frames.
	matches := func(frames [][]byte) bool {
		for _, raw := range frames {
			f, ok := parseTCP(raw)
			if !ok || f.src.String() != l.sndAddr || f.dst.String() != l.rcvAddr {
				continue
			}
			o, ok := findOpt(f.options())
			if !ok || o.hops() != 3 {
				continue
			}
			match := true
			for h := 0; h < 3; h++ {
				r := o.recs[h]
				if uint64(e.Hop[h].TS) != r.ts || uint64(e.Hop[h].TxBytes) != r.tx || uint64(e.Hop[h].Qlen) != r.qlen {
					match = false
				}
			}
			if match {
				return true
			}
		}
		return false
	}
	seen := matches(capt.waitFor(2*time.Second, matches))
	if !seen {
		t.Errorf("the echoed records match no forward option that arrived")
	}
	// The echo does not depend on the tracing programs, whose misses are
	// machine-wide (CI's other packages' traffic counts too): logged only.
	m, err := sw.TracepointMisses()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tracepoint misses %+v", m)
}

// attachAgent attaches the host agent to the run, with the echo map pinned
// under the run's own BPF directory, and moves this process into its
// cgroup: sockets it opens from now on carry the option.
func attachAgent(t testing.TB, id runid.ID) *agent.Agent {
	t.Helper()
	return attachAgentWith(t, id, agent.Options{})
}

// attachAgentWith is attachAgent with options (its EchoPinDir is set).
func attachAgentWith(t testing.TB, id runid.ID, opts agent.Options) *agent.Agent {
	t.Helper()
	opts.EchoPinDir = filepath.Join(id.BPFDir(), "cc")
	ag, err := agent.Attach(context.Background(), id, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ag.Close(); err != nil {
			t.Errorf("close agent: %v", err)
		}
	})
	if err := ag.AddProcess(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	return ag
}

// transferForEcho sends size bytes from sndNs to rcvAddr:7001 in rcvNs
// over one TCP connection of this process and returns the newest echo
// the sender's socket parsed.
func transferForEcho(t testing.TB, ag *agent.Agent, sndNs, rcvNs, rcvAddr string, size int) agent.Echo {
	t.Helper()
	return transferWatching(t, ag, sndNs, rcvNs, rcvAddr, size, nil)
}

// transferWatching is transferForEcho, handing watch (when not nil) the
// sender's echo every 2 ms while the data is being written.
func transferWatching(t testing.TB, ag *agent.Agent, sndNs, rcvNs, rcvAddr string, size int, watch func(agent.Echo)) agent.Echo {
	t.Helper()
	var err error
	var ln *net.TCPListener
	if err := nsexec.Do(rcvNs, func() error {
		ln, err = net.ListenTCP("tcp4", &net.TCPAddr{IP: net.ParseIP(rcvAddr), Port: 7001})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan int64, 1)
	go func() {
		c, err := ln.AcceptTCP()
		if err != nil {
			got <- -1
			return
		}
		defer c.Close()
		n, _ := io.Copy(io.Discard, c)
		got <- n
	}()
	var c *net.TCPConn
	if err := nsexec.Do(sndNs, func() error {
		c, err = net.DialTCP("tcp4", nil, &net.TCPAddr{IP: net.ParseIP(rcvAddr), Port: 7001})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	if watch != nil {
		stop, watched := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(watched)
			for {
				select {
				case <-stop:
					return
				case <-time.After(2 * time.Millisecond):
				}
				_ = raw.Control(func(fd uintptr) {
					if e, ok, err := ag.Echo(int(fd)); ok && err == nil {
						watch(e)
					}
				})
			}
		}()
		defer func() { close(stop); <-watched }()
	}
	_ = c.SetWriteDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	if err := c.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-got:
		if n != int64(size) {
			t.Fatalf("receiver read %d of %d bytes", n, size)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("transfer stalled")
	}

	var e agent.Echo
	var ok bool
	var echoErr error
	if err := raw.Control(func(fd uintptr) { e, ok, echoErr = ag.Echo(int(fd)) }); err != nil || echoErr != nil {
		t.Fatal(err, echoErr)
	}
	if !ok || e.Count == 0 {
		t.Fatalf("no echo reached the sender (ok %v, count %d)", ok, e.Count)
	}
	return e
}
