package intswitch

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"

	"cclab/internal/units"
	"cclab/topology"
)

func TestConfigRejects(t *testing.T) {
	ok := PortConfig{Node: "s1", Iface: "r1", PeerNode: "rcv", PeerIface: "l1", Rate: units.Rate(1e9)}
	ns := func(n string) string { return "cclab-x-" + n }
	for name, tc := range map[string]struct {
		cfg  Config
		want string
	}{
		"no netns":       {Config{Ports: []PortConfig{ok}}, "no Netns"},
		"no ports":       {Config{Netns: ns}, "no ports"},
		"missing peer":   {Config{Netns: ns, Ports: []PortConfig{{Node: "s1", Iface: "r1"}}}, "required"},
		"long name":      {Config{Netns: ns, Ports: []PortConfig{{Node: "s1", Iface: "a-very-long-interface", PeerNode: "x", PeerIface: "y"}}}, "15 characters"},
		"self peer":      {Config{Netns: ns, Ports: []PortConfig{{Node: "s1", Iface: "a", PeerNode: "s1", PeerIface: "b"}}}, "same node"},
		"port twice":     {Config{Netns: ns, Ports: []PortConfig{ok, ok}}, "listed twice"},
		"peer fed twice": {Config{Netns: ns, Ports: []PortConfig{ok, {Node: "s2", Iface: "q", PeerNode: "rcv", PeerIface: "l1"}}}, "already fed"},
		"attach mode":    {Config{Netns: ns, Ports: []PortConfig{ok}, Attach: AttachClassic + 1}, "unknown attach mode"},
		"RED kmin=kmax":  {Config{Netns: ns, Ports: []PortConfig{withRED(ok, RED{Kmin: 20_000, Kmax: 20_000, Pmax: 0.2})}}, "kmin 20KB is not below kmax 20KB"},
		"RED pmax > 1":   {Config{Netns: ns, Ports: []PortConfig{withRED(ok, RED{Kmin: 1, Kmax: 2, Pmax: 1.2})}}, "pmax 1.2 is outside"},
		"RED pmax 0":     {Config{Netns: ns, Ports: []PortConfig{withRED(ok, RED{Kmin: 1, Kmax: 2})}}, "pmax 0 is outside"},
		"RED and K": {Config{Netns: ns, Ports: []PortConfig{func() PortConfig {
			p := withRED(ok, hpccRED)
			p.ECNThreshold = 30_000
			return p
		}()}}, "a threshold (30KB) and a RED profile"},
		"RED kmax": {Config{Netns: ns, Ports: []PortConfig{withRED(ok, RED{Kmin: 1, Kmax: 5 << 30, Pmax: 0.2})}}, "beyond any queue"},
		"RED no rate to scale by": {Config{Netns: ns, Ports: []PortConfig{func() PortConfig {
			p := withRED(ok, hpccRED)
			p.Rate = 0
			return p
		}()}}, "switch port s1/r1: ECN RED profile for 25Gbit ports: the port has no rate"},
		"RED collapses on the port": {Config{Netns: ns, Ports: []PortConfig{withRED(ok, RED{Kmin: 100, Kmax: 110, Pmax: 0.2, Rate: units.Rate(25e9)})}}, "kmin 4B is not below kmax 4B"},
		"QCN without qeq":           {Config{Netns: ns, Ports: []PortConfig{withQCN(ok, QCN{Sample: 150_000})}}, "qeq is required"},
		"QCN qeq too large":         {Config{Netns: ns, Ports: []PortConfig{withQCN(ok, QCN{Qeq: 1 << 30})}}, "must be at most"},
		"QCN no rate to scale by": {Config{Netns: ns, Ports: []PortConfig{func() PortConfig {
			p := withQCN(ok, QCN{Qeq: 64_000, Rate: units.Rate(1e9)})
			p.Rate = 0
			return p
		}()}}, "QCN congestion point for 1Gbit ports: the port has no rate"},
		"QCN scaled to 0":        {Config{Netns: ns, Ports: []PortConfig{withQCN(ok, QCN{Qeq: 10, Rate: units.Rate(100e9)})}}, "qeq 0B and sample 1500B must be in 1B.."},
		"PFC settings, no mode":  {Config{Netns: ns, Ports: []PortConfig{ok}, PFC: PFC{Xoff: 30_000}}, "PFC: settings without a mode"},
		"PFC unknown mode":       {Config{Netns: ns, Ports: []PortConfig{ok}, PFC: PFC{Mode: PFCDynamic + 1}}, "PFC: unknown mode 3"},
		"PFC static xon >= xoff": {Config{Netns: ns, Ports: []PortConfig{ok}, PFC: PFC{Mode: PFCStatic, Xoff: 30_000, Xon: 30_000}}, "xoff 30KB must be above 0 and above xon 30KB"},
		"PFC static no xoff":     {Config{Netns: ns, Ports: []PortConfig{ok}, PFC: PFC{Mode: PFCStatic}}, "xoff 0B must be above 0"},
		"PFC dynamic alpha 0":    {Config{Netns: ns, Ports: []PortConfig{ok}, PFC: PFC{Mode: PFCDynamic, Buffer: 1 << 20}}, "alpha 0 is outside (0, 1]"},
		"PFC dynamic no buffer":  {Config{Netns: ns, Ports: []PortConfig{ok}, PFC: PFC{Mode: PFCDynamic, Alpha: HPCCAlpha}}, "the shared buffer 0B must be in"},
		"PFC switch too large": {Config{Netns: ns, Ports: func() []PortConfig {
			var ps []PortConfig
			for i := range MaxPFCPorts + 1 {
				ps = append(ps, PortConfig{Node: "s1", Iface: fmt.Sprintf("p%d", i), PeerNode: fmt.Sprintf("h%d", i), PeerIface: "eth0"})
			}
			return ps
		}(), PFC: PFC{Mode: PFCStatic, Xoff: 30_000}}, "switch s1 has more than 32 ports"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Attach(context.Background(), tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Attach: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// hpccRED is the HPCC paper's DCQCN marking (as experiment files' `ecn_red:
// {}` gives it): Kmin 100KB, Kmax 400KB at 25 Gbit/s, Pmax 0.2.
var hpccRED = RED{Kmin: 100_000, Kmax: 400_000, Pmax: 0.2, Rate: units.Rate(25e9)}

func withRED(p PortConfig, r RED) PortConfig {
	p.ECNRed = r
	return p
}

func withQCN(p PortConfig, q QCN) PortConfig {
	p.QCN = q
	return p
}

// The kernel's configuration of a port: the step threshold, or RED's
// thresholds scaled to the port's rate (HPCC's 100KB/400KB at 25 Gbit/s:
// 4KB/16KB at 1 Gbit/s) and its Pmax in ppm; none without marking.
func TestPortCfg(t *testing.T) {
	for _, c := range []struct {
		m    Marking
		rate units.Rate
		want switchbpfPortCfg
	}{
		{Marking{}, units.Rate(1e9), switchbpfPortCfg{RateMbps: 1000}},
		{Marking{Threshold: 75_000}, units.Rate(1e8), switchbpfPortCfg{EcnK: 75_000, RateMbps: 100}},
		{Marking{RED: hpccRED}, units.Rate(1e9), switchbpfPortCfg{EcnK: 4_000, EcnKmax: 16_000, EcnPmaxPpm: 200_000, RateMbps: 1000}},
		{Marking{RED: hpccRED}, units.Rate(1e8), switchbpfPortCfg{EcnK: 400, EcnKmax: 1_600, EcnPmaxPpm: 200_000, RateMbps: 100}},
		{Marking{RED: hpccRED}, units.Rate(100e9), switchbpfPortCfg{EcnK: 400_000, EcnKmax: 1_600_000, EcnPmaxPpm: 200_000, RateMbps: 100_000}},
		{Marking{RED: RED{Kmin: 0, Kmax: 30_000, Pmax: 1}}, units.Rate(1e8), switchbpfPortCfg{EcnK: 0, EcnKmax: 30_000, EcnPmaxPpm: 1_000_000, RateMbps: 100}},
		// QCN: the bytes as given; the standard's 150 KB when Sample is
		// 0; scaled from a reference rate; beside a marking.
		{Marking{QCN: QCN{Qeq: 64_000, Sample: 150_000}}, units.Rate(1e9), switchbpfPortCfg{RateMbps: 1000, QcnQeq: 64_000, QcnSample: 150_000}},
		{Marking{QCN: QCN{Qeq: 64_000}}, units.Rate(1e9), switchbpfPortCfg{RateMbps: 1000, QcnQeq: 64_000, QcnSample: 150_000}},
		{Marking{QCN: QCN{Qeq: 64_000, Sample: 150_000, Rate: units.Rate(1e9)}}, units.Rate(1e8), switchbpfPortCfg{RateMbps: 100, QcnQeq: 6_400, QcnSample: 15_000}},
		{Marking{Threshold: 30_000, QCN: QCN{Qeq: 20_000, Sample: 100_000}}, units.Rate(1e8), switchbpfPortCfg{EcnK: 30_000, RateMbps: 100, QcnQeq: 20_000, QcnSample: 100_000}},
	} {
		got, err := c.m.portCfg(c.rate)
		if err != nil || got != c.want {
			t.Errorf("%+v at %v: %+v (%v), want %+v", c.m, c.rate, got, err, c.want)
		}
		if back := markingOf(got); c.m.RED.Rate == 0 && c.m.QCN.Rate == 0 && c.m.QCN.Sample != 0 && back != c.m {
			t.Errorf("%+v read back as %+v", c.m, back)
		}
	}
}

func TestRateMbps(t *testing.T) {
	for r, want := range map[units.Rate]uint32{1e9: 1000, 100e6: 100, 25e9: 25000, 1500: 0, 0: 0} {
		if got := rateMbps(r); got != want {
			t.Errorf("rateMbps(%d) = %d, want %d", r, got, want)
		}
	}
}

func TestPortsFromPlan(t *testing.T) {
	p := &topology.Plan{
		Nodes: []topology.Node{{Name: "h0", Role: topology.Host}, {Name: "s0", Role: topology.Switch}, {Name: "h1", Role: topology.Host}},
		Links: []topology.Link{
			{A: topology.Port{Node: "h0", Iface: "s0"}, B: topology.Port{Node: "s0", Iface: "h0"}, Rate: units.Rate(1e9)},
			{A: topology.Port{Node: "s0", Iface: "h1"}, B: topology.Port{Node: "h1", Iface: "s0"}, Rate: units.Rate(1e8)},
		},
	}
	for _, m := range []Marking{{Threshold: 30 << 10}, {RED: hpccRED}} {
		got := PortsFromPlan(p, m)
		want := []PortConfig{
			{Node: "s0", Iface: "h0", PeerNode: "h0", PeerIface: "s0", Rate: units.Rate(1e9), ECNThreshold: m.Threshold, ECNRed: m.RED},
			{Node: "s0", Iface: "h1", PeerNode: "h1", PeerIface: "s0", Rate: units.Rate(1e8), ECNThreshold: m.Threshold, ECNRed: m.RED},
		}
		if len(got) != len(want) {
			t.Fatalf("got %+v", got)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("port %d: %+v, want %+v", i, got[i], want[i])
			}
		}
	}
}

// TestAttachFailsCleanly: a port whose interface does not exist fails
// Attach with an error naming it, and leaves no program on the ports that
// were fine; Close removes exactly what Attach added: the tcx links, or the
// classic filters and the clsact qdiscs the switch created, never a clsact
// qdisc or filter that was there before.
func TestAttachFailsCleanly(t *testing.T) { eachMode(t, testAttachFailsCleanly) }

func testAttachFailsCleanly(t *testing.T, mode AttachMode) {
	// Two switches: the devices between them are a port and a peer both.
	l := newLine(t, 2, linkOpts{rate: units.Rate(1e9), buffer: 64 << 10})
	l.mode = mode
	// Someone else's clsact qdisc and filter on one peer.
	l.in("rcv", "tc", "qdisc", "add", "dev", l.rcvIface(), "clsact")
	l.in("rcv", "tc", "filter", "add", "dev", l.rcvIface(), "ingress", "prio", "100", "protocol", "all",
		"u32", "match", "u32", "0", "0", "flowid", "1:1")
	before := switchHooks(t, l)
	if before.foreign == 0 || before.clsact != 1 {
		t.Fatalf("before Attach: %+v", before)
	}
	cfg := l.cfg()
	cfg.Ports = append(cfg.Ports, PortConfig{Node: "s2", Iface: "nosuch0", PeerNode: "rcv", PeerIface: "nosuch1"})
	_, err := Attach(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "nosuch0") {
		t.Fatalf("Attach: %v, want an error naming nosuch0", err)
	}
	if h := switchHooks(t, l); h != before {
		t.Errorf("after a failed Attach: %+v, before %+v", h, before)
	}
	sw, err := Attach(context.Background(), l.cfg())
	if err != nil {
		t.Fatal(err)
	}
	want := before
	if mode == AttachClassic {
		// A filter per port and per peer; a clsact qdisc on each device
		// they are on but the one that had it.
		devs := map[[2]string]bool{}
		for _, p := range l.ports {
			devs[[2]string{p.Node, p.Iface}] = true
			devs[[2]string{p.PeerNode, p.PeerIface}] = true
		}
		want.classic += 2 * len(l.ports)
		want.clsact += len(devs) - 1
	} else {
		want.tcx += 2 * len(l.ports)
	}
	if h := switchHooks(t, l); h != want {
		t.Errorf("with %d ports attached (%s): %+v, want %+v", len(l.ports), sw.Mode(), h, want)
	}
	if err := sw.Close(); err != nil {
		t.Fatal(err)
	}
	if h := switchHooks(t, l); h != before {
		t.Errorf("after Close: %+v, before %+v", h, before)
	}
}

// hooks counts what is attached to the test network's interfaces.
type hooks struct {
	tcx     int // tcx programs
	classic int // the switch's cls_bpf filters
	foreign int // other classic filters
	clsact  int // clsact qdiscs
}

// switchHooks counts the tc hooks on the test network's own interfaces
// (queried inside each namespace; other runs may have switches of their
// own attached elsewhere).
func switchHooks(t *testing.T, l *line) hooks {
	t.Helper()
	var h hooks
	for _, node := range l.nodes {
		err := inNetlink(l.ns(node), func(nh *netlink.Handle) error {
			links, err := nh.LinkList()
			if err != nil {
				return err
			}
			for _, lnk := range links {
				for _, at := range []ebpf.AttachType{ebpf.AttachTCXIngress, ebpf.AttachTCXEgress} {
					r, err := link.QueryPrograms(link.QueryOptions{Target: lnk.Attrs().Index, Attach: at})
					if err != nil {
						continue // no tcx entry on this device
					}
					h.tcx += len(r.Programs)
				}
				has, err := hasClsact(nh, lnk)
				if err != nil || !has {
					continue
				}
				h.clsact++
				for _, parent := range []uint32{netlink.HANDLE_MIN_INGRESS, netlink.HANDLE_MIN_EGRESS} {
					fs, err := nh.FilterList(lnk, parent)
					if err != nil {
						return err
					}
					for _, f := range fs {
						if bf, ok := f.(*netlink.BpfFilter); ok && bf.Name == classicName {
							h.classic++
						} else {
							h.foreign++
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func TestSamplingPeriod(t *testing.T) {
	l := newLine(t, 1, linkOpts{rate: units.Rate(1e9), buffer: 64 << 10})
	sw := attach(t, l.cfg())
	var buf bytes.Buffer
	for _, p := range []time.Duration{0, 50 * time.Microsecond, 11 * time.Millisecond} {
		if _, err := sw.StartSampling(context.Background(), p, &buf); err == nil {
			t.Errorf("period %v accepted", p)
		}
	}
	smp, err := sw.StartSampling(context.Background(), 100*time.Microsecond, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sw.StartSampling(context.Background(), time.Millisecond, &buf); err == nil {
		t.Error("a second sampler started")
	}
	start := time.Now()
	l.in("snd", "ping", "-c", "2", "-i", "0.05", "-q", l.rcvAddr)
	time.Sleep(300*time.Millisecond - time.Since(start))
	if err := smp.Stop(); err != nil {
		t.Fatal(err)
	}
	// Stopped, a new sampler may start.
	smp2, err := sw.StartSampling(context.Background(), time.Millisecond, &bytes.Buffer{})
	if err != nil {
		t.Fatalf("restart after Stop: %v", err)
	}
	if err := smp2.Stop(); err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(buf.String()), "\n")
	// 100 us ticks over 300 ms, two ports per tick; a busy machine skips
	// ticks (each row carries its own time), so ask for one per 10 ms.
	t.Logf("%d rows in 300 ms at a 100 us period", len(rows)-1)
	if rows[0] != QueuesCSVHeader || len(rows) < 2*30 || uint64(len(rows)-1) != smp.Rows() {
		t.Fatalf("%d rows (%d counted), header %q", len(rows), smp.Rows(), rows[0])
	}
	last := strings.Split(rows[len(rows)-1], ",")
	if last[3] != "0" {
		t.Errorf("idle queue sampled as %s", last[3])
	}
}
