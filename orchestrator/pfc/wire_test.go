package pfc

import (
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"cclab/orchestrator/flows"
	"cclab/tcopt/intswitch"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// monoToReal is CLOCK_REALTIME less CLOCK_MONOTONIC now, as the runner
// records it (run.json clock_offset_ns).
func monoToReal(*testing.T) int64 { return flows.Realtime() - flows.Monotonic() }

// dataSent returns when (CLOCK_MONOTONIC ns) the capture at s0's port to
// s1 saw each data segment from h0 leave.
func dataSent(t *testing.T, r losslessRun) []int64 {
	t.Helper()
	f, err := os.Open(r.pcap)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pr, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for {
		data, ci, err := pr.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		pkt := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.NoCopy)
		ip, _ := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		tcp, _ := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if ip == nil || tcp == nil || !ip.SrcIP.Equal(r.h0Addr.AsSlice()) || int(ip.Length)-int(ip.IHL)*4-int(tcp.DataOffset)*4 <= 0 {
			continue
		}
		out = append(out, ci.Timestamp.UnixNano()-r.monoToReal)
	}
}

// TestPauseOnTheWire: the lossless line's run (TestControllerPausesUpstream's)
// seen on the wire. s1 pauses s0's port to it; a capture of that port
// shows when h0's data segments left. While a pause is in force (from
// the change's return to its resume's due time, less the most a change is
// issued early) the port sends at most one segment (the frame the TBF had
// already taken), though s0's queue to s1 is not empty: h0 keeps sending
// into s0 until s0 pauses it in turn. A pause that did not hold, or that
// the capture's clock places wrongly, shows as segments inside the window.
func TestPauseOnTheWire(t *testing.T) {
	r := runLosslessLine(t, intswitch.Headroom(time.Millisecond, linkRate))
	sent := dataSent(t, r)
	if len(sent) < 1000 {
		t.Fatalf("the capture of s0's port to s1 holds %d data segments from h0", len(sent))
	}
	var windows, inside, worst, held int
	var pausedNs int64
	var pauseAt int64
	paused := false
	for _, c := range r.report.Changes {
		if c.Node != "s0" || c.Iface != "s1" {
			continue
		}
		if c.Pause {
			pauseAt, paused = c.DoneNs, true
			continue
		}
		if !paused {
			t.Fatalf("a resume of s0/s1 at %d without a pause", c.DoneNs)
		}
		paused = false
		end := c.DueNs - maxEarly.Nanoseconds()
		if c.AtStop {
			end = c.DoneNs
		}
		if end <= pauseAt {
			continue
		}
		windows++
		pausedNs += end - pauseAt
		n := 0
		for _, s := range sent {
			if s > pauseAt && s < end {
				n++
			}
		}
		inside += n
		worst = max(worst, n)
		// Held back: segments leave at once when the pause ends.
		after := 0
		for _, s := range sent {
			if s >= c.DoneNs && s < c.DoneNs+time.Millisecond.Nanoseconds() {
				after++
			}
		}
		if after >= 2 {
			held++
		}
		if n > 1 {
			t.Errorf("pause of s0/s1 from %d to %d (%v): %d data segments left", pauseAt, end, time.Duration(end-pauseAt), n)
		}
	}
	t.Logf("%d data segments left s0 for s1; %d pause windows, %v in all, %d segments inside them (at most %d in one); %d followed by 2 or more segments within 1 ms of the resume",
		len(sent), windows, time.Duration(pausedNs), inside, worst, held)
	if windows == 0 || held == 0 {
		t.Fatalf("%d pauses of s0 by s1, %d with segments waiting: the run tests no pause", windows, held)
	}
}
