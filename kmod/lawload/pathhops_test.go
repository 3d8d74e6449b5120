package lawload

import (
	"context"
	"net/netip"
	"testing"
	"time"
)

// Swift reads its path's hop count from the table at connection start:
// with a 1 ms base target and 2 ms per hop, a flow across the test net's
// one router aims at 3 ms told its path, at 11 ms with the parameter's 5
// hops, and its RTT follows (the 16 ms buffer holds either).
func TestSwiftTakesItsPathHops(t *testing.T) {
	r := loadForTest(t, "swift", "host_bw_mbps=100", "base_rtt_ns=500000", "base_target_ns=1000000",
		"per_hop_ns=2000000", "hops=5", "fs_range_ns=0")
	opts := Options{PinDir: filepathDir(r.Pin)}
	var rtt [2]uint32
	for i, hops := range []uint32{1, 0} {
		var paths []PathHops
		if hops > 0 {
			paths = []PathHops{{Src: netip.MustParseAddr("10.77.1.1"), Dst: netip.MustParseAddr("10.77.2.1"), Switches: hops}}
		}
		if err := SetPathHops(opts, paths); err != nil {
			t.Fatal(err)
		}
		n := newTestNet(t, testRate, testBuf, true)
		f := n.flows(t, context.Background(), r.Name, 1, 0, 2*time.Second)[0]
		rtt[i] = f.medianRTT(time.Second)
		t.Logf("path hops %d (0: the parameter's 5): median srtt %d us", hops, rtt[i])
	}
	if rtt[0] > 5000 || rtt[1] < 8000 {
		t.Errorf("median srtt %d us told 1 hop (target 3 ms), %d us with 5 (11 ms)", rtt[0], rtt[1])
	}
}

// A law without a path table: SetPathHops says so.
func TestNoPathTable(t *testing.T) {
	r := loadForTest(t, "dctcp")
	err := SetPathHops(Options{PinDir: filepathDir(r.Pin)}, nil)
	if err != ErrNoPathTable {
		t.Fatalf("dctcp alone: %v, want ErrNoPathTable", err)
	}
}
