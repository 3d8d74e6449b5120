package intswitch

// Test-only network builder: namespaces joined by veth pairs, each end
// shaped with HTB + bfifo like a cclab link, L3 routing between them. The
// orchestrator's netbuild does this for real runs; the switch tests build
// their own small networks so that they depend on nothing else.

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"cclab/internal/runid"
	"cclab/internal/units"
)

type testNet struct {
	t     testing.TB
	id    runid.ID
	nodes []string
	ports []PortConfig // switch egress ports, for Attach
	mode  AttachMode   // how cfg asks the switch to attach
}

// attachModes are the two ways the switch attaches. This kernel has tcx,
// so AttachAuto takes tcx; the tests that prove stamping, echoes, queue
// lengths and clean-up run under classic too.
var attachModes = []AttachMode{AttachTCX, AttachClassic}

// eachMode runs fn as a subtest per attach mode.
func eachMode(t *testing.T, fn func(t *testing.T, mode AttachMode)) {
	for _, m := range attachModes {
		t.Run(m.String(), func(t *testing.T) { fn(t, m) })
	}
}

func newTestNet(t testing.TB) *testNet {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the switch tests need root (namespaces, BPF)")
	}
	n := &testNet{t: t, id: runid.New()}
	t.Cleanup(func() {
		for _, node := range n.nodes {
			// Only our own namespaces, by their full run-prefixed name.
			_ = exec.Command("ip", "netns", "del", n.ns(node)).Run()
		}
	})
	return n
}

func (n *testNet) ns(node string) string { return n.id.Netns(node) }

func (n *testNet) cfg() Config {
	return Config{Netns: n.ns, Ports: n.ports, Attach: n.mode}
}

// sh runs a command and fails the test on error.
func (n *testNet) sh(args ...string) string {
	n.t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		n.t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// in runs a command inside a node's namespace.
func (n *testNet) in(node string, args ...string) string {
	n.t.Helper()
	return n.sh(append([]string{"ip", "netns", "exec", n.ns(node)}, args...)...)
}

func (n *testNet) addNode(name string, router bool) {
	n.t.Helper()
	n.sh("ip", "netns", "add", n.ns(name))
	n.nodes = append(n.nodes, name)
	fwd := "0"
	if router {
		fwd = "1"
	}
	// IPv6 off: its autoconfiguration chatter would be counted in the
	// queues the tests compare exactly. Timestamps off: 5 INT slots.
	n.in(name, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
		"net.ipv6.conf.default.disable_ipv6=1", "net.ipv4.ip_forward="+fwd,
		"net.ipv4.tcp_timestamps=0")
	n.sh("ip", "-n", n.ns(name), "link", "set", "lo", "up")
}

// linkOpts shape one veth pair.
type linkOpts struct {
	rate     units.Rate
	buffer   units.Size
	ecnK     units.Size // on the switch ends
	offloads bool       // leave TSO/GSO/checksum offloads on
	tbf      bool       // a lossless port: TBF root (4-frame burst) over its FIFO
}

// link joins a/aif (address aaddr/24) to b/bif (baddr/24), shapes both
// egress directions and registers each switch end as an INT port.
func (n *testNet) link(a, aif, aaddr string, aSwitch bool, b, bif, baddr string, bSwitch bool, o linkOpts) {
	n.t.Helper()
	n.sh("ip", "link", "add", aif, "netns", n.ns(a), "type", "veth", "peer", "name", bif, "netns", n.ns(b))
	for _, e := range [][2]string{{a, aif}, {b, bif}} {
		node, ifc := e[0], e[1]
		if !o.offloads {
			// Per-packet INT, and checksums computed and verified in
			// software so that a broken one is caught.
			n.in(node, "ethtool", "-K", ifc, "tx", "off", "rx", "off", "tso", "off", "gso", "off", "gro", "off")
		}
		rate := fmt.Sprintf("%dbit", o.rate.BitsPerSecond())
		if o.tbf {
			// TBF makes its own byte FIFO of the limit (netbuild's
			// lossless ports graft theirs as 10:).
			n.sh("tc", "-n", n.ns(node), "qdisc", "add", "dev", ifc, "root", "handle", "1:", "tbf",
				"rate", rate, "burst", "6056", "limit", fmt.Sprint(uint64(o.buffer)))
			continue
		}
		n.sh("tc", "-n", n.ns(node), "qdisc", "add", "dev", ifc, "root", "handle", "1:", "htb", "default", "1")
		n.sh("tc", "-n", n.ns(node), "class", "add", "dev", ifc, "parent", "1:", "classid", "1:1", "htb",
			"rate", rate, "ceil", rate, "burst", "64k", "cburst", "64k")
		n.sh("tc", "-n", n.ns(node), "qdisc", "add", "dev", ifc, "parent", "1:1", "handle", "10:", "bfifo",
			"limit", fmt.Sprint(uint64(o.buffer)))
	}
	n.sh("ip", "-n", n.ns(a), "addr", "add", aaddr+"/24", "dev", aif)
	n.sh("ip", "-n", n.ns(b), "addr", "add", baddr+"/24", "dev", bif)
	n.sh("ip", "-n", n.ns(a), "link", "set", aif, "up")
	n.sh("ip", "-n", n.ns(b), "link", "set", bif, "up")
	if aSwitch {
		n.ports = append(n.ports, PortConfig{Node: a, Iface: aif, PeerNode: b, PeerIface: bif, Rate: o.rate, ECNThreshold: o.ecnK})
	}
	if bSwitch {
		n.ports = append(n.ports, PortConfig{Node: b, Iface: bif, PeerNode: a, PeerIface: aif, Rate: o.rate, ECNThreshold: o.ecnK})
	}
}

func (n *testNet) route(node, dst, via string) {
	n.t.Helper()
	n.sh("ip", "-n", n.ns(node), "route", "add", dst, "via", via)
}

// A line is snd - s1 - ... - sN - rcv. Link j joins node j to node j+1
// (node 0 is snd) on 10.9.j.0/24: the left end is .1 ("r<j>"), the right
// end .2 ("l<j>").
type line struct {
	*testNet
	switches int
	sndAddr  string
	rcvAddr  string
}

func lineNode(j, switches int) string {
	switch j {
	case 0:
		return "snd"
	case switches + 1:
		return "rcv"
	}
	return fmt.Sprintf("s%d", j)
}

func newLine(t testing.TB, switches int, o linkOpts) *line {
	n := newTestNet(t)
	for j := 0; j <= switches+1; j++ {
		n.addNode(lineNode(j, switches), j > 0 && j <= switches)
	}
	for j := 0; j <= switches; j++ {
		n.link(lineNode(j, switches), fmt.Sprintf("r%d", j), fmt.Sprintf("10.9.%d.1", j), j > 0,
			lineNode(j+1, switches), fmt.Sprintf("l%d", j), fmt.Sprintf("10.9.%d.2", j), j+1 <= switches, o)
	}
	for k := 0; k <= switches+1; k++ {
		for j := 0; j <= switches; j++ {
			switch {
			case j < k-1: // to the left
				n.route(lineNode(k, switches), fmt.Sprintf("10.9.%d.0/24", j), fmt.Sprintf("10.9.%d.1", k-1))
			case j > k: // to the right
				n.route(lineNode(k, switches), fmt.Sprintf("10.9.%d.0/24", j), fmt.Sprintf("10.9.%d.2", k))
			}
		}
	}
	return &line{testNet: n, switches: switches,
		sndAddr: "10.9.0.1", rcvAddr: fmt.Sprintf("10.9.%d.2", switches)}
}

// rcvIface is the receiver's interface (fed by the last switch's port).
func (l *line) rcvIface() string { return fmt.Sprintf("l%d", l.switches) }

// lastSwitch and lastPort: the port that feeds the receiver.
func (l *line) lastSwitch() string { return lineNode(l.switches, l.switches) }
func (l *line) lastPort() string   { return fmt.Sprintf("r%d", l.switches) }
