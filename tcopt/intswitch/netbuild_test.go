package intswitch

import (
	"context"
	"testing"
	"time"

	"cclab/internal/runid"
	"cclab/orchestrator/netbuild"
	"cclab/topology"
)

// TestOnNetbuildLine attaches the switch the way a run does, to every
// switch port of a topology built by netbuild (topologies/line-3.yaml,
// 100 Mbit/s), and checks that a flow through the host agent comes back
// with the three records, in order, with the links' rate; on HTB ports,
// and on lossless ones (TBF roots over the FIFO 10:) with PFC detection
// on.
func TestOnNetbuildLine(t *testing.T) {
	t.Run("htb", func(t *testing.T) { testOnNetbuildLine(t, false) })
	t.Run("lossless", func(t *testing.T) { testOnNetbuildLine(t, true) })
}

func testOnNetbuildLine(t *testing.T, lossless bool) {
	plan, err := topology.Load("../../topologies/line-3.yaml")
	if err != nil {
		t.Fatal(err)
	}
	id := runid.New()
	opt := netbuild.Options{ECN: 2, DefaultCC: "cubic"} // per-packet INT: offloads and timestamps off
	cfgPFC := PFC{}
	if lossless {
		opt.Lossless, opt.SharedBuffer = true, 1<<20
		cfgPFC = PFC{Mode: PFCStatic, Xoff: 1 << 30, Xon: 1 << 29}
	}
	net, err := netbuild.Up(context.Background(), id, plan, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := net.Down(context.Background()); err != nil {
			t.Errorf("down: %v", err)
		}
	})
	ports := PortsFromPlan(net.Plan, Marking{})
	if len(ports) != 6 {
		t.Fatalf("%d switch ports in line-3, want 6", len(ports))
	}
	sw := attach(t, Config{Netns: net.Netns, Ports: ports, PFC: cfgPFC})
	ag := attachAgent(t, id)
	h1, _ := net.Plan.Node("h1")
	e := transferForEcho(t, ag, net.Netns("h0"), net.Netns("h1"), h1.Addr.String(), 1<<20)
	t.Logf("echo #%d: %+v", e.Count, e.Hop[:e.NHops])
	if e.NHops != 3 || e.Flags&0x10 != 0 {
		t.Fatalf("echo has %d hops, flags %#x; want 3", e.NHops, e.Flags)
	}
	st, err := sw.Stats()
	if err != nil {
		t.Fatal(err)
	}
	for h := 0; h < 3; h++ {
		if e.Hop[h].RateMbps != 100 {
			t.Errorf("hop %d: rate %d Mbit/s, want 100", h, e.Hop[h].RateMbps)
		}
		if h > 0 && !pathOrder(e.Hop[h].TS, e.Hop[h-1].TS, 5*time.Millisecond, clockLead(st)) {
			t.Errorf("hops %d and %d out of order (clock lead %v)", h-1, h, clockLead(st))
		}
	}
	for _, p := range st {
		t.Logf("%s/%s: enq %d tx %d drop %d stamped %d queue %d", p.Node, p.Iface, p.Enqueued, p.Transmitted, p.Dropped, p.Stamped, p.QueueBytes())
		// Data goes h0 -> h1; the other way only pure ACKs carrying
		// echoes, which a switch leaves alone.
		forward := map[string]bool{"s0/s1": true, "s1/s2": true, "s2/h1": true}[p.Node+"/"+p.Iface]
		if forward != (p.Stamped > 0) || p.QueueBytes() != 0 {
			t.Errorf("%s/%s: stamped %d, queue %d (forward port: %v)", p.Node, p.Iface, p.Stamped, p.QueueBytes(), forward)
		}
	}
	pfc, used, err := sw.PFCPorts()
	if err != nil {
		t.Fatal(err)
	}
	if lossless != (len(pfc) == len(ports)) || len(used) != map[bool]int{false: 0, true: 3}[lossless] {
		t.Errorf("PFC accounting of %d ports on %d switches (lossless %v)", len(pfc), len(used), lossless)
	}
	for _, p := range pfc {
		// An idle line: nothing left counted, no crossing.
		if p.Occupancy != 0 || p.Xoffs != 0 {
			t.Errorf("%s/%s: occupancy %d, %d Xoff after the flow", p.Node, p.Iface, p.Occupancy, p.Xoffs)
		}
	}
}
