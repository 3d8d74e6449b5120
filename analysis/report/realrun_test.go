package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gopacket/gopacket/afpacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"cclab/analysis/pcapflows"
	"cclab/internal/nsexec"
	"cclab/internal/testnet"
	"cclab/internal/testtier"
	"cclab/internal/units"
	"cclab/rundir"
	"cclab/topology"
)

// capture records headers-only packets on iface in namespace ns into a
// pcap file until stop is called.
func capture(t *testing.T, ns, iface, path string) (stop func()) {
	t.Helper()
	var tp *afpacket.TPacket
	err := nsexec.Do(ns, func() error {
		var err error
		tp, err = afpacket.NewTPacket(afpacket.OptInterface(iface), afpacket.OptFrameSize(4096),
			afpacket.OptBlockSize(4096*128), afpacket.OptNumBlocks(16), afpacket.OptPollTimeout(50*time.Millisecond))
		return err
	})
	if err != nil {
		t.Fatalf("afpacket in %s: %v", ns, err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := pcapgo.NewWriterNanos(f)
	w.WriteFileHeader(128, layers.LinkTypeEthernet)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			data, ci, err := tp.ZeroCopyReadPacketData()
			if err == nil {
				if len(data) > 128 {
					data = data[:128]
				}
				ci.CaptureLength = len(data)
				w.WritePacket(ci, data)
				continue
			}
			select {
			case <-done:
				return
			default:
			}
			if !errors.Is(err, afpacket.ErrTimeout) {
				t.Errorf("capture: %v", err)
				return
			}
		}
	}()
	return func() {
		time.Sleep(100 * time.Millisecond) // let the last ACKs land
		close(done)
		wg.Wait()
		tp.Close()
		f.Close()
	}
}

// TestRealTransferThroughTheWholeAnalysis runs real kernel TCP transfers
// between two namespaces, captures them with afpacket at the sender,
// writes a run directory with the application's own timings, and checks
// the analysis finds every flow, with the right size, complete, and
// within a millisecond of what the application measured.
func TestRealTransferThroughTheWholeAnalysis(t *testing.T) {
	testtier.Kernel(t) // namespaces, veth, AF_PACKET
	ea, eb := testnet.Pair(t)
	a, b := ea.Netns, eb.Netns
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "pcap"), 0o755)
	stop := capture(t, a, ea.Iface, filepath.Join(dir, "pcap", "h0-"+ea.Iface+".pcap"))

	var ln net.Listener
	if err := nsexec.Do(b, func() error {
		var err error
		ln, err = net.Listen("tcp4", eb.Addr.String()+":5001")
		return err
	}); err != nil {
		stop()
		t.Fatal(err)
	}
	defer ln.Close()
	type result struct {
		size       int
		port       int
		start, end int64 // CLOCK_REALTIME ns
	}
	sizes := []int{3_000, 100_000, 2_000_000}
	results := make([]result, len(sizes))
	readDone := make(chan int64, 1)
	go func() {
		for range sizes {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n, _ := io.Copy(io.Discard, c)
			readDone <- time.Now().UnixNano()
			_ = n
			c.Close()
		}
	}()
	buf := make([]byte, 2_000_000)
	for i, size := range sizes {
		var c net.Conn
		start := time.Now().UnixNano()
		if err := nsexec.Do(a, func() error {
			var err error
			c, err = net.Dial("tcp4", eb.Addr.String()+":5001")
			return err
		}); err != nil {
			stop()
			t.Fatal(err)
		}
		if _, err := c.Write(buf[:size]); err != nil {
			t.Fatal(err)
		}
		c.(*net.TCPConn).CloseWrite()
		end := <-readDone
		c.Close()
		results[i] = result{size: size, port: c.LocalAddr().(*net.TCPAddr).Port, start: start, end: end}
	}
	stop()

	// The run directory: the app's clock here is realtime, so offset 0.
	plan := &topology.Plan{Name: "pair", Kind: "star",
		Nodes: []topology.Node{{Name: "h0", Role: topology.Host, Addr: ea.Addr},
			{Name: "h1", Role: topology.Host, Addr: eb.Addr}},
		Links: []topology.Link{{A: topology.Port{Node: "h0", Iface: ea.Iface}, B: topology.Port{Node: "h1", Iface: eb.Iface}, Rate: units.Rate(10e9)}}}
	rj, _ := json.Marshal(map[string]any{"id": "real", "clock_offset_ns": 0, "topology": plan})
	os.WriteFile(filepath.Join(dir, "run.json"), rj, 0o644)
	var csv strings.Builder
	csv.WriteString(strings.Join(rundir.FlowsColumns, ",") + "\n")
	for i, r := range results {
		fmt.Fprintf(&csv, "r%d,h0,h1,%s,%d,%s,5001,%d,cubic,%d,%d,%d,,ok,test\n", i, ea.Addr, r.port, eb.Addr, r.size, r.start, r.end, r.end-r.start)
	}
	os.WriteFile(filepath.Join(dir, "flows.csv"), []byte(csv.String()), 0o644)

	c, err := pcapflows.ReadFile(context.Background(), filepath.Join(dir, "pcap", "h0-"+ea.Iface+".pcap"), pcapflows.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Flows) != len(sizes) {
		t.Fatalf("%d flows in the capture, want %d: %+v", len(c.Flows), len(sizes), c.Flows)
	}
	for i, f := range c.Flows {
		r := results[i]
		if f.Status != pcapflows.StatusComplete || !f.HandshakeSeen || f.Bytes != uint64(r.size) || f.Client.Port() != uint16(r.port) {
			t.Errorf("flow %d: %+v, want %d bytes complete from port %d", i, f, r.size, r.port)
		}
		// The SYN leaves after the app's start; the sender sees the last
		// ACK about when the receiver has read the data.
		if f.Start < r.start || f.Start-r.start > int64(50*time.Millisecond) {
			t.Errorf("flow %d: SYN %d ns after the app's start", i, f.Start-r.start)
		}
		// The app's end is read by a goroutine after its copy returns, so a
		// loaded machine makes the app's FCT longer, never shorter.
		if d := f.FCT - time.Duration(r.end-r.start); d > 20*time.Millisecond || d < -100*time.Millisecond {
			t.Errorf("flow %d: pcap FCT %v, app FCT %v", i, f.FCT, time.Duration(r.end-r.start))
		}
	}
	an, err := AnalyzeRun(context.Background(), dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range an.Flows {
		if !f.Complete || f.PcapStatus != "complete" || f.Capture != "h0-"+ea.Iface+".pcap" || f.Slowdown.F() < 1 {
			t.Errorf("analysed flow %+v", f)
		}
	}
	// Same bytes on both sides: a mismatch here can only be one of timing
	// (a reader waking late on this busy machine), never a pairing error.
	for _, m := range an.Mismatches {
		if !strings.HasPrefix(m.Reason, "last byte arrived") && !strings.HasPrefix(m.Reason, "SYN ") {
			t.Errorf("mismatch %+v", m)
		}
	}
	t.Logf("%d packets captured; FCTs app/pcap: %v", c.Packets, func() (s []string) {
		for i, f := range c.Flows {
			s = append(s, fmt.Sprintf("%v/%v", time.Duration(results[i].end-results[i].start), f.FCT))
		}
		return
	}())
}
