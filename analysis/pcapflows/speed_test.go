package pcapflows

import (
	"bufio"
	synth "cclab/internal/pcapsynth"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// writeLoad writes a headers-only pcap of n packets: conc connections at a
// time, each a handshake, 100 data segments with their ACKs, and FINs,
// interleaved round-robin as a loaded link would carry them. It returns the
// number of connections it started.
func writeLoad(tb testing.TB, path string, n, conc int) int {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	hdr := make([]byte, 24)
	binary.LittleEndian.PutUint32(hdr[0:], 0xa1b23c4d) // nanosecond pcap
	binary.LittleEndian.PutUint16(hdr[4:], 2)
	binary.LittleEndian.PutUint16(hdr[6:], 4)
	binary.LittleEndian.PutUint32(hdr[16:], 54)
	binary.LittleEndian.PutUint32(hdr[20:], 1)
	w.Write(hdr)
	type conn struct {
		sport uint16
		src   [4]byte
		step  int
		seq   uint32
	}
	const segs, mss = 100, 1448
	cs := make([]conn, conc)
	started := 0
	next := func(c *conn) {
		started++
		c.sport = uint16(10000 + started%50000)
		c.src = [4]byte{10, 1, byte(started >> 16), byte(started >> 8)}
		c.step, c.seq = 0, uint32(started)*2654435761
	}
	for i := range cs {
		next(&cs[i])
	}
	rec := make([]byte, 16)
	ts := synth.Epoch0.UnixNano()
	for written := 0; written < n; {
		for i := range cs {
			if written == n {
				break
			}
			c := &cs[i]
			p := synth.Pkt{Src: c.src, Dst: synth.HostB, Sport: c.sport, Dport: 5001}
			isnB := uint32(77)
			switch s := c.step; {
			case s == 0:
				p.Seq, p.Flags = c.seq, flagSYN
			case s == 1:
				p.Src, p.Dst, p.Sport, p.Dport = synth.HostB, c.src, 5001, c.sport
				p.Seq, p.Ack, p.Flags = isnB, c.seq+1, flagSYN|flagACK
			case s < 2+2*segs && s%2 == 0:
				k := uint32(s/2 - 1)
				p.Seq, p.Ack, p.Flags, p.Payload = c.seq+1+k*mss, isnB+1, flagACK, mss
			case s < 2+2*segs:
				k := uint32(s/2 - 1)
				p.Src, p.Dst, p.Sport, p.Dport = synth.HostB, c.src, 5001, c.sport
				p.Seq, p.Ack, p.Flags = isnB+1, c.seq+1+(k+1)*mss, flagACK
			case s == 2+2*segs:
				p.Seq, p.Ack, p.Flags = c.seq+1+segs*mss, isnB+1, flagFIN|flagACK
			default:
				p.Src, p.Dst, p.Sport, p.Dport = synth.HostB, c.src, 5001, c.sport
				p.Seq, p.Ack, p.Flags = isnB+1, c.seq+2+segs*mss, flagFIN|flagACK
			}
			fr := synth.Frame(p)
			ts += 700
			binary.LittleEndian.PutUint32(rec[0:], uint32(ts/1e9))
			binary.LittleEndian.PutUint32(rec[4:], uint32(ts%1e9))
			binary.LittleEndian.PutUint32(rec[8:], 54)
			binary.LittleEndian.PutUint32(rec[12:], uint32(len(fr)))
			w.Write(rec)
			w.Write(fr[:54])
			written++
			c.step++
			if c.step > 3+2*segs {
				next(c)
			}
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	return started
}

// measure reads path and returns packets per second and the heap in use
// after the read.
func measure(tb testing.TB, path string) (pps float64, c *Capture, heap uint64) {
	tb.Helper()
	runtime.GC()
	t0 := time.Now()
	c, err := ReadFile(context.Background(), path, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	el := time.Since(t0)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(c.Packets) / el.Seconds(), c, ms.HeapInuse
}

// TestThroughputOrderOfMagnitude is the always-on speed check: 400k
// packets must read at well over half a million packets per second even on
// a busy machine (the full figure is TestSpeed10M's).
func TestThroughputOrderOfMagnitude(t *testing.T) {
	path := filepath.Join(t.TempDir(), "load.pcap")
	writeLoad(t, path, 400_000, 200)
	best := 0.0
	for range 3 {
		pps, c, _ := measure(t, path)
		if c.Packets != 400_000 || c.Skipped != 0 {
			t.Fatalf("read %d packets, %d skipped", c.Packets, c.Skipped)
		}
		best = max(best, pps)
	}
	t.Logf("%.2f M packets/s", best/1e6)
	if best < 500_000 {
		t.Fatalf("%.0f packets/s, want >= 500k", best)
	}
}

// TestSpeed10M is the figure of docs/performance.md: a generated
// 10-million-packet capture, read single-threaded, beside tshark on the
// same file. It writes ~700 MB to a temp dir, so it runs only with
// CCLAB_SPEED=1.
func TestSpeed10M(t *testing.T) {
	if os.Getenv("CCLAB_SPEED") == "" {
		t.Skip("set CCLAB_SPEED=1 to measure the 10M-packet figure")
	}
	runtime.GOMAXPROCS(1)
	path := filepath.Join(t.TempDir(), "load10m.pcap")
	if keep := os.Getenv("CCLAB_SPEED_FILE"); keep != "" {
		path = keep // kept, e.g. to time `cclab analyze --pcap` on it
	}
	conns := writeLoad(t, path, 10_000_000, 1000)
	best := 0.0
	var heap uint64
	var c *Capture
	for range 3 {
		pps, cc, h := measure(t, path)
		if pps > best {
			best, heap, c = pps, h, cc
		}
	}
	complete := 0
	for _, f := range c.Flows {
		if f.Status == StatusComplete {
			complete++
		}
	}
	t.Logf("cclab: %d packets, %d flows (%d complete, %d started), %.2f M packets/s, heap in use %d MB",
		c.Packets, len(c.Flows), complete, conns, best/1e6, heap>>20)
	if len(c.Flows) != conns {
		t.Errorf("%d flows, want %d", len(c.Flows), conns)
	}
	if best < 2e6 {
		t.Errorf("%.2f M packets/s, want >= 2", best/1e6)
	}
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Log("tshark not installed: no comparison")
		return
	}
	t0 := time.Now()
	out, err := exec.Command("tshark", "-q", "-z", "conv,tcp", "-r", path).CombinedOutput()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, out)
	}
	ts := time.Since(t0)
	tpps := float64(c.Packets) / ts.Seconds()
	t.Logf("tshark -q -z conv,tcp: %v, %.3f M packets/s; cclab is %.1fx faster", ts.Round(time.Millisecond), tpps/1e6, best/tpps)
	fmt.Fprintf(os.Stderr, "SPEED cclab=%.3fMpps tshark=%.3fMpps ratio=%.1f heapMB=%d flows=%d\n", best/1e6, tpps/1e6, best/tpps, heap>>20, len(c.Flows))
}

func BenchmarkReadLoad(b *testing.B) {
	path := filepath.Join(b.TempDir(), "load.pcap")
	const n = 1_000_000
	writeLoad(b, path, n, 500)
	b.ResetTimer()
	for b.Loop() {
		if _, err := ReadFile(context.Background(), path, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "packets/s")
}
