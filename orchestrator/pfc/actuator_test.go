package pfc

import (
	"context"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"cclab/internal/nsexec"
	"cclab/internal/runid"
	"cclab/internal/testnet"
	"cclab/orchestrator/cleanup"
	"cclab/orchestrator/netbuild"
	"cclab/topology"
)

// read reads a port's root qdisc counters.
func read(t *testing.T, q *testnet.QdiscReader) testnet.QdiscStats {
	t.Helper()
	st, err := q.Read()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// udpLoad sends 1400-byte datagrams from a namespace to dst at about
// 92 Mbit/s (8 every millisecond) until ctx ends.
func udpLoad(t *testing.T, ctx context.Context, ns, dst string) <-chan struct{} {
	var c net.Conn
	if err := nsexec.Do(ns, func() (err error) {
		c, err = net.Dial("udp", net.JoinHostPort(dst, "9"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer c.Close()
		buf := make([]byte, 1400)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for range 8 {
				_, _ = c.Write(buf) // the host's own qdisc may refuse one: not measured
			}
		}
	}()
	return done
}

// TestPauseActuator: a lossless port (netbuild's TBF root, 100 Mbit/s)
// under a steady UDP load of about 92 Mbit/s. Paused, it sends at most
// one frame while its queue grows by more than 1 MB in 200 ms, nothing
// dropped; resumed (with the kick), it sends at the link rate within 3 %
// while it drains.
// Then 1000 changes (pause, resume) under the load give the netlink
// change's latency, logged.
func TestPauseActuator(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root (namespaces)")
	}
	const limit = 4 << 20
	opt := netbuild.DefaultOptions()
	opt.Lossless, opt.SharedBuffer = true, limit
	p, err := topology.Parse("test.yaml", []byte("name: r\nkind: line\nline: {switches: 1}\nlinks:\n  default: {rate: 100Mbit, buffer: 256KB}\n"))
	if err != nil {
		t.Fatal(err)
	}
	id := runid.New()
	t.Cleanup(func() { cleanup.Clean(context.Background(), id) })
	n, err := netbuild.Up(t.Context(), id, p, opt)
	if err != nil {
		t.Fatal(err)
	}
	rate := p.Links[0].Rate
	a, err := Open(Port{Netns: n.Netns("s0"), Iface: "h1", PeerNetns: n.Netns("h1"), PeerIface: topology.HostIface, Rate: rate, Limit: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := a.Close(); err != nil {
			t.Error(err)
		}
	}()
	q := testnet.RootQdisc(t, n.Netns("s0"), "h1")
	h1, _ := p.Node("h1")
	ctx, cancel := context.WithCancel(t.Context())
	load := udpLoad(t, ctx, n.Netns("h0"), h1.Addr.String())
	defer func() { cancel(); <-load }()
	time.Sleep(300 * time.Millisecond)

	// Paused: at most one frame leaves, the queue keeps what arrives.
	if err := a.Pause(); err != nil {
		t.Fatal(err)
	}
	p0 := read(t, q)
	time.Sleep(200 * time.Millisecond)
	p1 := read(t, q)
	t.Logf("paused 200 ms: %d frames (%d B) left, backlog %d -> %d B, %d dropped", p1.Packets-p0.Packets, p1.Bytes-p0.Bytes, p0.Backlog, p1.Backlog, p1.Drops-p0.Drops)
	if p1.Packets-p0.Packets > 1 || p1.Drops != p0.Drops || p1.Backlog < p0.Backlog+1_000_000 {
		t.Errorf("paused: %d frames left (at most 1), %d dropped, backlog %d -> %d (want more than 1 MB more)", p1.Packets-p0.Packets, p1.Drops-p0.Drops, p0.Backlog, p1.Backlog)
	}

	// Resumed: the link rate while the queue drains (at 8 Mbit/s net).
	if err := a.Resume(); err != nil {
		t.Fatal(err)
	}
	// Measured while the queue holds more than 100 KB: the port is busy
	// all along.
	time.Sleep(20 * time.Millisecond)
	r0 := read(t, q)
	r1 := r0
	for time.Since(r0.At) < time.Second {
		time.Sleep(20 * time.Millisecond)
		r := read(t, q)
		if r.Backlog < 100_000 {
			break
		}
		r1 = r
	}
	span := r1.At.Sub(r0.At)
	got := float64(r1.Bytes-r0.Bytes) * 8 / span.Seconds()
	t.Logf("resumed: %.2f Mbit/s of frames over %v (link %v), backlog %d -> %d B", got/1e6, span, rate, r0.Backlog, r1.Backlog)
	if span < 100*time.Millisecond || got < 0.97*float64(rate) || got > 1.03*float64(rate) {
		t.Errorf("resumed: %.2f Mbit/s over %v while draining, want %v within 3 %% over at least 100 ms", got/1e6, span, rate)
	}
	if r1.Drops != p0.Drops {
		t.Errorf("%d drops since the pause", r1.Drops-p0.Drops)
	}
	for r1.Backlog > 0 && time.Since(r1.At) < 3*time.Second {
		time.Sleep(50 * time.Millisecond)
		r1 = read(t, q)
	}

	// 1000 changes under the load.
	var pause, resume []time.Duration
	for range 500 {
		s := time.Now()
		if err := a.Pause(); err != nil {
			t.Fatal(err)
		}
		pause = append(pause, time.Since(s))
		time.Sleep(200 * time.Microsecond)
		s = time.Now()
		if err := a.Resume(); err != nil {
			t.Fatal(err)
		}
		resume = append(resume, time.Since(s))
		time.Sleep(time.Millisecond)
	}
	all := slices.Concat(pause, resume)
	t.Logf("netlink change latency under load: pause p50 %v p99 %v, resume+kick p50 %v p99 %v, all %d p50 %v p99 %v max %v",
		pct(pause, 0.5), pct(pause, 0.99), pct(resume, 0.5), pct(resume, 0.99), len(all), pct(all, 0.5), pct(all, 0.99), pct(all, 1))
	if st := read(t, q); st.Drops != p0.Drops {
		t.Errorf("%d drops during the changes", st.Drops-p0.Drops)
	}

	// Why the kick: with nothing arriving, a paused port set back to the
	// link rate stays idle (tbf_change leaves the watchdog a frame's time
	// at 8 bit/s ahead) until a packet is enqueued.
	cancel()
	<-load
	time.Sleep(300 * time.Millisecond)
	if err := a.Pause(); err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithCancel(t.Context())
	load2 := udpLoad(t, ctx2, n.Netns("h0"), h1.Addr.String())
	time.Sleep(50 * time.Millisecond)
	cancel2()
	<-load2
	time.Sleep(20 * time.Millisecond)
	if err := a.change(a.resumeMsg, rate); err != nil {
		t.Fatal(err)
	}
	k0 := read(t, q)
	time.Sleep(100 * time.Millisecond)
	k1 := read(t, q)
	if err := a.kick.send(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	k2 := read(t, q)
	t.Logf("rate restored without a kick: %d frames left in 100 ms, backlog %d -> %d B; after the kick: backlog %d B",
		k1.Packets-k0.Packets, k0.Backlog, k1.Backlog, k2.Backlog)
	if k0.Backlog < 100_000 || k1.Packets-k0.Packets > 1 || k2.Backlog != 0 {
		t.Errorf("without a kick %d frames left a %d B queue in 100 ms (want none), after it %d B stayed (want 0)", k1.Packets-k0.Packets, k0.Backlog, k2.Backlog)
	}
}

func pct(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(p*float64(len(s)-1))]
}
