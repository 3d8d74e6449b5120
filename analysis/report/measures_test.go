package report

import (
	"math"
	"testing"
	"time"
)

// A TCP mouse crosses the bottleneck queue twice (its SYN, then its
// data): the queue it met is half of what it waited beyond its two base
// RTTs, so a queue of 50 KB at 100 Mbit/s (4 ms) reads as 50 KB.
func TestMiceQueueIsOneCrossing(t *testing.T) {
	const rtt, wait = 4 * time.Millisecond, 4 * time.Millisecond
	var a Analysis
	for range 5 {
		a.Flows = append(a.Flows, Flow{Group: "mice", Complete: true, PcapStatus: "complete",
			PcapFCT: 2*rtt + 2*wait, BaseRTT: rtt})
	}
	m := measureMice(NewMeasureView(&a, 100e6), "mice")
	if got := m["mice_queue"]; math.Abs(got-50_000) > 1 {
		t.Fatalf("mice_queue %.0f bytes, want 50000", got)
	}
	if got := m["mice_data_rtts"]; math.Abs(got-2) > 1e-9 {
		t.Fatalf("mice_data_rtts %.3f, want 2 (one base RTT and one wait of a base RTT)", got)
	}
}
