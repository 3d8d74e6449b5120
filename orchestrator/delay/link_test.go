package delay_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"cclab/internal/nsexec"
	"cclab/internal/quiettest"
	"cclab/orchestrator/delay"
	"cclab/orchestrator/health"
	"cclab/tcopt/intswitch"
	"cclab/topology"
)

// linePlan is h0 - s0 - s1 - h1: three links of one-way delay d each at
// rate, the delay held under placement.
func linePlan(t *testing.T, rate string, d time.Duration, placement string) *topology.Plan {
	t.Helper()
	yml := fmt.Sprintf("name: lp\nkind: line\nline: {switches: 2}\nlinks:\n  default: {rate: %s, buffer: 4MB, delay: %dns}\ndelay: {placement: %s}\n",
		rate, d.Nanoseconds(), placement)
	p, err := topology.Parse("lp.yaml", []byte(yml))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Under both placements the RTT floor of h0 - s0 - s1 - h1 is the sum of
// its links' delays, twice: the least of 200 ping-pongs is at least the
// configured RTT, and exceeds it by no more than the least the same line
// takes without delay plus the line's median bar for every pass a packet
// makes through it (2 under path placement, each of the path's delay; 6
// under link placement, each of a link's); the median stays within the
// undelayed median plus the p99 bar for every pass.
func TestPlacementRTTFloor(t *testing.T) {
	const d = 500 * time.Microsecond
	configured := 2 * 3 * d
	base := pingPong(t, linePlanNoDelay(t), 7101)
	t.Logf("no delay: min %v median %v", time.Duration(base.MinNs), time.Duration(base.MedianNs))
	for _, placement := range []string{topology.PlacePath, topology.PlaceLink} {
		t.Run(placement, func(t *testing.T) {
			p := linePlan(t, "100Mbit", d, placement)
			passes, per := 2, 3*d
			if placement == topology.PlaceLink {
				passes, per = 6, d
			}
			b50, b99 := lineBars(per)
			floorBar := configured + time.Duration(base.MinNs) + time.Duration(passes)*b50
			medianBar := configured + time.Duration(base.MedianNs) + time.Duration(passes)*b99
			// A second measurement when the first misses a bar: the
			// kernel's cleanup of the tests' namespaces before (it runs
			// after they are deleted) can lift a whole sample of 200 on
			// this 2-core machine (seen once in make test: 41 us over).
			var rtt *health.RTT
			for attempt := 1; attempt <= 2; attempt++ {
				rtt = pingPong(t, p, uint16(7102+10*attempt))
				t.Logf("%s, attempt %d: RTT min %v (bar %v) median %v (bar %v), configured %v", placement, attempt,
					time.Duration(rtt.MinNs), floorBar, time.Duration(rtt.MedianNs), medianBar, configured)
				if time.Duration(rtt.MinNs) <= floorBar && time.Duration(rtt.MedianNs) <= medianBar {
					break
				}
			}
			if time.Duration(rtt.MinNs) < configured {
				t.Errorf("RTT floor %v below the configured %v: a link's delay is missing", time.Duration(rtt.MinNs), configured)
			}
			if time.Duration(rtt.MinNs) > floorBar {
				t.Errorf("RTT floor %v above %v", time.Duration(rtt.MinNs), floorBar)
			}
			if time.Duration(rtt.MedianNs) > medianBar {
				t.Errorf("RTT median %v above %v", time.Duration(rtt.MedianNs), medianBar)
			}
		})
	}
}

func linePlanNoDelay(t *testing.T) *topology.Plan {
	t.Helper()
	p, err := topology.Parse("lp0.yaml", []byte("name: lp0\nkind: line\nline: {switches: 2}\nlinks:\n  default: {rate: 100Mbit, buffer: 4MB}\n"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// pingPong builds p, serves its line and measures 200 ping-pongs h0 <-> h1.
func pingPong(t *testing.T, p *topology.Plan, port uint16) *health.RTT {
	t.Helper()
	n, _ := upPlan(t, p)
	rtt, err := health.PingPong(context.Background(), "h0", host(n, "h0"), "h1", host(n, "h1"), port, 200)
	if err != nil {
		t.Fatal(err)
	}
	return rtt
}

// Under link placement a packet served its delay is received by the
// interface it arrived on: s0 forwards h0's packets to s1 with the ingress
// interface (skb_iif) of its port facing h0, never a sink's. A tc counter
// at s0's egress towards s1 counts forwarded packets per ingress ifindex.
func TestLinkPlacementKeepsIngress(t *testing.T) {
	n, srv := upPlan(t, linePlan(t, "100Mbit", 500*time.Microsecond, topology.PlaceLink))
	var ifindex map[string]int
	var counts *ebpf.Map
	err := nsexec.Do(n.Netns("s0"), func() error {
		var err error
		if ifindex, err = ifindexes(); err != nil {
			return err
		}
		counts, err = countIngress(t, ifindex["s1"])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	const pings = 200
	if _, err := health.PingPong(context.Background(), "h0", host(n, "h0"), "h1", host(n, "h1"), 7103, pings); err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	for name, idx := range ifindex {
		var v uint64
		if err := counts.Lookup(uint32(idx), &v); err == nil {
			got[name] = v
		}
	}
	var fromH0 uint64
	for _, ps := range srv.Stats().Ports {
		if ps.Name == "s0/h0" {
			fromH0 = ps.Classes[0].Sent
		}
	}
	t.Logf("forwarded to s1 by ingress interface: %v; the line sent %d packets into s0/h0", got, fromH0)
	if got["h0"] < pings {
		t.Errorf("%d packets forwarded to s1 with ingress h0, want at least the %d pings", got["h0"], pings)
	}
	if fromH0 < got["h0"] {
		t.Errorf("the line delayed %d packets of h0's link, fewer than the %d forwarded: some skipped the delay", fromH0, got["h0"])
	}
	for name, v := range got {
		if name != "h0" && v > 0 {
			t.Errorf("%d packets forwarded to s1 with ingress %s", v, name)
		}
	}
}

// Under link placement the INT switch stamps a packet once, as it arrives
// from the upstream's queue, before the take program holds it: its stamp
// runs first on every receiving interface and skips a packet that comes
// back marked. Two unpaced ECN flows from h1 and h2 fill s0's port towards
// h0 on the probe star past a 10 KB marking threshold, which the stamp
// applies as the packets arrive at h0. Were the take first, the stamp
// would see only marked packets and mark nothing; were the mark not
// skipped, every packet would be counted a second time, without a dequeue
// snapshot ("late").
func TestLinkPlacementStampsOnce(t *testing.T) {
	plan := starPlanAt(t, time.Millisecond, topology.PlaceLink)
	n, _ := upPlan(t, plan)
	for _, h := range []string{"h1", "h2"} {
		err := nsexec.Do(n.Netns(h), func() error { return os.WriteFile("/proc/sys/net/ipv4/tcp_ecn", []byte("1"), 0) })
		if err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sw, err := intswitch.Attach(ctx, intswitch.Config{Netns: n.Netns, Ports: intswitch.PortsFromPlan(plan, intswitch.Marking{Threshold: 10e3})})
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Close()
	var fs []*paced
	for i, h := range []string{"h1", "h2"} {
		f, err := startPaced(host(n, h), host(n, "h0"), uint16(7104+i), 0)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	time.Sleep(time.Second)
	for _, f := range fs {
		f.stop()
	}
	time.Sleep(50 * time.Millisecond)
	st, err := sw.Stats()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range st {
		if p.Node != "s0" || p.Iface != "h0" {
			continue
		}
		t.Logf("s0/h0: %d packets enqueued, %d transmitted, %d CE-marked, %d late", p.EnqueuedPkts, p.TransmittedPkt, p.CEMarked, p.Late)
		if p.EnqueuedPkts < 100 || p.CEMarked == 0 {
			t.Errorf("s0/h0: %d packets enqueued, %d CE-marked: the stamp does not see the packets it should", p.EnqueuedPkts, p.CEMarked)
		}
		if p.TransmittedPkt > p.EnqueuedPkts || p.Late*100 > p.TransmittedPkt {
			t.Errorf("s0/h0: %d enqueued, %d transmitted, %d late: packets counted twice", p.EnqueuedPkts, p.TransmittedPkt, p.Late)
		}
		return
	}
	t.Fatal("no port s0/h0 in the switch's stats")
}

// Live delay changes under link placement: the probe star's links go from
// 500 us to 1.5 ms and back (every path from 1 ms to 3 ms) while probes
// and a paced TCP flow cross s0; probes sent after each change carry the
// new delay within the line's bars, none reorder, and every port ends
// with the first delay as its one class.
func TestReplaceLinkPlacement(t *testing.T) {
	const d1, d2 = time.Millisecond, 3 * time.Millisecond
	quiettest.Retry(t, quiettest.Policy{Failures: 2, Tries: 4}, func(int) error {
		n, srv := upPlan(t, starPlanAt(t, d1, topology.PlaceLink))
		place := func(d time.Duration) *delay.Placement {
			pl, err := delay.Place(starPlanAt(t, d, topology.PlaceLink))
			if err != nil {
				t.Fatal(err)
			}
			return pl
		}
		tr := startTraffic(t, n, "h2", "h1", "h3", 9111, 100*time.Microsecond, 200e6/8)
		time.Sleep(300 * time.Millisecond)
		inc := replaceAt(t, srv, place(d2))
		time.Sleep(300 * time.Millisecond)
		dec := replaceAt(t, srv, place(d1))
		time.Sleep(300 * time.Millisecond)
		cs, err := tr.stop(t, 2*d2+50*time.Millisecond)
		st := srv.Stop()
		checkLineAfter(t, st, 2)
		for _, ps := range st.Ports {
			if got := classDelays(ps); !slices.Equal(got, []time.Duration{d1 / 2}) {
				t.Fatalf("%s reports classes %v, want [%v]", ps.Name, got, d1/2)
			}
		}
		if err != nil {
			return err
		}
		return firstErr(
			checkDelay("before the increase", entered(cs, 0, inc.call), d1),
			checkDelay("after the increase", entered(cs, inc.ret, dec.call), d2),
			checkDelay("after the decrease", entered(cs, dec.ret+int64(d2-d1+200*time.Microsecond), 1<<62), d1),
		)
	})
}

// Link placement needs the line: netem is refused before anything is
// built, path placement keeps both engines.
func TestLinkPlacementNeedsTheLine(t *testing.T) {
	link, err := delay.Place(linePlan(t, "100Mbit", time.Millisecond, topology.PlaceLink))
	if err != nil {
		t.Fatal(err)
	}
	path, err := delay.Place(linePlan(t, "100Mbit", time.Millisecond, topology.PlacePath))
	if err != nil {
		t.Fatal(err)
	}
	if !link.Link() || path.Link() || len(link.Ports) != 6 || len(path.Ports) != 2 {
		t.Fatalf("link placement %d ports (link %v), path placement %d (link %v)", len(link.Ports), link.Link(), len(path.Ports), path.Link())
	}
	if err := delay.CheckEngine(link, delay.EngineNetem); err == nil {
		t.Error("link placement with netem: no error")
	}
	for _, c := range []struct {
		pl *delay.Placement
		e  delay.Engine
	}{{link, delay.EngineLine}, {path, delay.EngineNetem}, {path, delay.EngineLine}} {
		if err := delay.CheckEngine(c.pl, c.e); err != nil {
			t.Errorf("link %v with %s: %v", c.pl.Link(), c.e, err)
		}
	}
}
