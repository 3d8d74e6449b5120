package netbuild

import (
	"encoding/binary"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cclab/internal/nsexec"
	"cclab/internal/quiettest"
)

// A host NIC with several queues serves them round robin: a probe whose
// packets have a queue of their own crosses a 100 Mbit/s host port in
// about a frame time while another socket keeps its own queue full (1 MB,
// 80 ms); behind one FIFO the probe waits out that backlog. The probe
// sends with the default priority (the NIC's first queue), the flood with
// the priority NICClass gives flow 0.
func TestNICQueuesRoundRobin(t *testing.T) {
	p := plan(t, "name: nicq\nkind: line\nline: {switches: 1}\nlinks:\n  default: {rate: 100Mbit, buffer: 1MB}\n")
	for _, queues := range []int{1, 16} {
		opt := DefaultOptions()
		opt.NICQueues = queues
		n := up(t, p, opt)
		h1, _ := n.Plan.Node("h1")
		// A busy machine (once: 36 probes, 5.4 ms) gets another try.
		quiettest.Retry(t, quiettest.Policy{Failures: 2, Tries: 4}, func(int) error {
			delays := floodAndProbe(t, n.Netns("h0"), n.Netns("h1"), net.IP(h1.Addr.AsSlice()), NICClass(0, queues))
			if len(delays) < 20 {
				return fmt.Errorf("%d queues: %d probes arrived", queues, len(delays))
			}
			med := delays[len(delays)/2]
			t.Logf("%d NIC queues: probe delay median %v, max %v (%d probes)", queues, med, delays[len(delays)-1], len(delays))
			switch {
			case queues == 1 && med < 40*time.Millisecond:
				return fmt.Errorf("one FIFO: the probe waited only %v behind a full 1 MB queue (80 ms at 100 Mbit/s)", med)
			case queues > 1 && med > 2*time.Millisecond:
				return fmt.Errorf("%d queues: the probe waited %v; round robin should take about a frame time of the flood per turn", queues, med)
			}
			return nil
		})
	}
}

// floodAndProbe floods dst from src with UDP at priority prio for 1.2 s
// while a second socket sends a timestamped probe every 5 ms; it returns
// the one-way delays of the probes sent after the first 300 ms, sorted.
func floodAndProbe(t *testing.T, src, dstNs string, dst net.IP, prio uint32) []time.Duration {
	t.Helper()
	const floodPort, probePort = 9000, 9001
	var rx *net.UDPConn
	var sink *net.UDPConn
	err := nsexec.Do(dstNs, func() error {
		var err error
		if rx, err = net.ListenUDP("udp4", &net.UDPAddr{Port: probePort}); err != nil {
			return err
		}
		sink, err = net.ListenUDP("udp4", &net.UDPAddr{Port: floodPort})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	defer sink.Close()
	var flood, probe *net.UDPConn
	err = nsexec.Do(src, func() error {
		var err error
		if flood, err = net.DialUDP("udp4", nil, &net.UDPAddr{IP: dst, Port: floodPort}); err != nil {
			return err
		}
		probe, err = net.DialUDP("udp4", nil, &net.UDPAddr{IP: dst, Port: probePort})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer flood.Close()
	defer probe.Close()
	// A send buffer beyond the queue's 1 MB (its skbs count against it
	// until they leave the queue), then the flow's queue.
	raw, err := flood.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	raw.Control(func(fd uintptr) {
		if serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, 8<<20); serr == nil && prio != 0 {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PRIORITY, int(prio))
		}
	})
	if serr != nil {
		t.Fatal(serr)
	}
	mono := func() int64 {
		var ts unix.Timespec
		unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
		return ts.Nano()
	}
	start := mono()
	end := start + int64(1200*time.Millisecond)
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { // the flood: faster than the link, so its queue stays full
		defer wg.Done()
		buf := make([]byte, 1400)
		for mono() < end {
			flood.Write(buf) // a full queue drops it: expected
		}
	}()
	go func() {
		defer wg.Done()
		buf := make([]byte, 16)
		for mono() < end {
			binary.NativeEndian.PutUint64(buf, uint64(mono()))
			probe.Write(buf)
			time.Sleep(5 * time.Millisecond)
		}
	}()
	var delays []time.Duration
	go func() {
		defer wg.Done()
		buf := make([]byte, 64)
		rx.SetReadDeadline(time.Now().Add(1500 * time.Millisecond))
		for {
			k, err := rx.Read(buf)
			if err != nil {
				return
			}
			at := mono()
			if k < 8 {
				continue
			}
			sent := int64(binary.NativeEndian.Uint64(buf))
			if sent-start > int64(300*time.Millisecond) {
				delays = append(delays, time.Duration(at-sent))
			}
		}
	}()
	wg.Wait()
	slices.Sort(delays)
	return delays
}
