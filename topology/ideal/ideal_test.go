package ideal

import (
	"testing"
	"time"

	"cclab/internal/units"
	"cclab/topology"
)

func TestIdealFCTByHand(t *testing.T) {
	// h0 -(10G, 1us)- s -(1G, 1us)- h1
	p := &topology.Plan{
		Nodes: []topology.Node{{Name: "h0", Role: topology.Host}, {Name: "s", Role: topology.Switch}, {Name: "h1", Role: topology.Host}},
		Links: []topology.Link{
			{A: topology.Port{Node: "h0"}, B: topology.Port{Node: "s"}, Rate: 10e9, Delay: units.Duration(time.Microsecond)},
			{A: topology.Port{Node: "s"}, B: topology.Port{Node: "h1"}, Rate: 1e9, Delay: units.Duration(time.Microsecond)},
		},
	}
	path, err := PathOf(p, "h0", "h1", DefaultFraming)
	if err != nil {
		t.Fatal(err)
	}
	if path.BottleneckBps != 1e9 {
		t.Fatalf("bottleneck %d", path.BottleneckBps)
	}
	// base RTT = 2*2us + 1514*8/10G + 1514*8/1G = 4us + 1211ns + 12112ns
	if got, want := path.BaseRTT(), 4*time.Microsecond+1211*time.Nanosecond+12112*time.Nanosecond; got != want {
		t.Fatalf("base RTT %v, want %v", got, want)
	}
	// 2920 B = 2 packets: 2920 + 108 = 3028 B = 24224 bits = 24.224 us at 1G
	if got, want := path.FCT(2920, DefaultFraming), path.BaseRTT()+24224*time.Nanosecond; got != want {
		t.Fatalf("FCT %v, want %v", got, want)
	}
	if Slowdown(time.Microsecond, time.Millisecond) != 1 || Slowdown(2*time.Millisecond, time.Millisecond) != 2 {
		t.Fatal("slowdown wrong")
	}
}
