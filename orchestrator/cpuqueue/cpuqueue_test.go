package cpuqueue

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"testing"
	"time"

	"cclab/internal/nsexec"
	"cclab/internal/quiettest"
	"cclab/internal/runid"
	"cclab/orchestrator/cleanup"
	"cclab/orchestrator/delay"
)

// probeFor builds a chain for a fresh run id and removes it at the end.
func probeFor(t *testing.T, links int) (*Probe, runid.ID) {
	t.Helper()
	id := runid.New()
	t.Cleanup(func() {
		cleanup.Clean(context.Background(), id)
		if ns, _ := cleanup.Namespaces(id); len(ns) > 0 {
			t.Errorf("namespaces left: %v", ns)
		}
	})
	p, err := Attach(id, links)
	if err != nil {
		t.Fatal(err)
	}
	if ns, _ := cleanup.Namespaces(id); len(ns) != links+1 {
		t.Fatalf("%d links made %d namespaces with the run's prefix: %v", links, len(ns), ns)
	}
	return p, id
}

// An idle chain echoes at its idle RTT, and a chain whose CPU is kept busy
// by packets (a UDP flood along the same veths) shows the backlog they
// wait in.
func TestProbeSeesTheBacklog(t *testing.T) {
	ctx := context.Background()
	// The quiet figures are the reference: one taken while the
	// hypervisor stole CPU time is taken again (quiettest).
	var quiet Report
	quiettest.Retry(t, quiettest.Policy{Failures: 1, Tries: 3}, func(int) error {
		p, _ := probeFor(t, 6)
		if err := p.Idle(ctx, 50); err != nil {
			t.Fatal(err)
		}
		p.Start()
		time.Sleep(300 * time.Millisecond)
		var err error
		if quiet, err = p.Stop(); err != nil {
			t.Fatal(err)
		}
		t.Logf("quiet: idle %+v loaded %+v queue p50/p99 %v/%v", quiet.Idle, quiet.Loaded,
			time.Duration(quiet.QueueP50Ns), time.Duration(quiet.QueueP99Ns))
		if quiet.Links != 6 || quiet.Loaded.Samples < 100 || quiet.Loaded.Lost > 0 {
			t.Fatalf("quiet chain: %+v", quiet)
		}
		if quiet.QueueP50Ns > int64(50*time.Microsecond) {
			return fmt.Errorf("an idle chain queued %v at the median", time.Duration(quiet.QueueP50Ns))
		}
		return nil
	})

	// The same chain under a flood of small datagrams from its first
	// namespace to its far end: every one crosses the six veths.
	p2, err := Attach(runid.New(), 0) // refused: no chain of 0 links
	if err == nil || p2 != nil {
		t.Fatalf("a 0-link chain was accepted")
	}
	q, _ := probeFor(t, 6)
	// Packet work on every CPU but the last, as a run steers it: the
	// flood's senders hand their packets over instead of processing
	// them in their own system calls.
	if err := delay.Steer(q.Namespaces(), runtime.NumCPU()-1); err != nil {
		t.Fatal(err)
	}
	if err := q.Idle(ctx, 50); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		var c *net.UDPConn
		err := nsexec.Do(q.names[0], func() error {
			var err error
			c, err = net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(linkAddr(5, 1).Addr(), 9)))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			buf := make([]byte, 64)
			for {
				select {
				case <-stop:
					return
				default:
				}
				c.Write(buf)
			}
		}()
	}
	q.Start()
	time.Sleep(500 * time.Millisecond)
	busy, err := q.Stop()
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("flooded: idle %+v loaded %+v queue p50/p99 %v/%v", busy.Idle, busy.Loaded,
		time.Duration(busy.QueueP50Ns), time.Duration(busy.QueueP99Ns))
	if busy.Loaded.Samples+busy.Loaded.Lost < 5 {
		t.Fatalf("the probe sent only %d echoes", busy.Loaded.Samples+busy.Loaded.Lost)
	}
	if busy.QueueP99Ns < 2*quiet.QueueP99Ns+int64(20*time.Microsecond) {
		t.Errorf("a flooded chain's p99 queue %v is not above the quiet one's %v",
			time.Duration(busy.QueueP99Ns), time.Duration(quiet.QueueP99Ns))
	}
}
