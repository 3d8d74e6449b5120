package pfc

import (
	"strings"
	"testing"
	"time"

	"cclab/internal/runid"
	"cclab/internal/units"
	"cclab/orchestrator/netbuild"
	"cclab/tcopt/intswitch"
	"cclab/topology"
)

// Upstreams of the lossless line (not built: it reads the plan and the
// options only): each switch port's upstream is its peer's egress, with
// the link's rate, delay and FIFO limit (the shared buffer on a switch,
// the host's own buffer on a NIC), in both namespaces; a network that is
// not lossless, not link-placed, or a port that is no link, is refused.
func TestUpstreams(t *testing.T) {
	plan, err := topology.Parse("pfcline.yaml", []byte(losslessLine))
	if err != nil {
		t.Fatal(err)
	}
	opt := netbuild.Options{Lossless: true, SharedBuffer: 4 << 20}
	n := &netbuild.Network{ID: runid.New(), Plan: plan, Options: opt}
	ports := intswitch.PortsFromPlan(plan, intswitch.Marking{})
	ups, err := Upstreams(n, ports)
	if err != nil {
		t.Fatal(err)
	}
	if len(ups) != len(ports) {
		t.Fatalf("%d upstreams for %d ports", len(ups), len(ports))
	}
	hostBuf := plan.Links[0].HostBuffer
	for _, u := range ups {
		t.Logf("%s/%s <- %+v, delay %v, host %v", u.Ingress.Node, u.Ingress.Iface, u.Port, u.Delay, u.Host)
		p := u.Port
		if p.Netns != n.Netns(u.Ingress.PeerNode) || p.Iface != u.Ingress.PeerIface || p.PeerNetns != n.Netns(u.Ingress.Node) || p.PeerIface != u.Ingress.Iface {
			t.Errorf("%s/%s: upstream port %+v is not its peer's egress", u.Ingress.Node, u.Ingress.Iface, p)
		}
		host := strings.HasPrefix(u.Ingress.PeerNode, "h")
		wantLimit := units.Size(opt.SharedBuffer)
		if host {
			wantLimit = hostBuf
		}
		if u.Host != host || p.Limit != wantLimit || p.Rate != units.Rate(100e6) || u.Delay != time.Millisecond {
			t.Errorf("%s/%s: host %v limit %v rate %v delay %v; want host %v limit %v, 100 Mbit/s, 1 ms", u.Ingress.Node, u.Ingress.Iface, u.Host, p.Limit, p.Rate, u.Delay, host, wantLimit)
		}
	}

	for _, c := range []struct {
		name  string
		net   *netbuild.Network
		ports []intswitch.PortConfig
		want  string
	}{
		{"lossy", &netbuild.Network{Plan: plan, Options: netbuild.Options{}}, ports, "not built lossless"},
		{"path placement", &netbuild.Network{Plan: pathPlaced(t), Options: opt}, ports, "link-placed"},
		{"no such link", n, []intswitch.PortConfig{{Node: "s0", Iface: "h0", PeerNode: "s1", PeerIface: "s0"}}, "no link"},
		{"host as switch", n, []intswitch.PortConfig{{Node: "h0", Iface: topology.HostIface, PeerNode: "s0", PeerIface: "h0"}}, "not a switch port"},
	} {
		if _, err := Upstreams(c.net, c.ports); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

func pathPlaced(t *testing.T) *topology.Plan {
	t.Helper()
	p, err := topology.Parse("pfcline.yaml", []byte(strings.Replace(losslessLine, "placement: link", "placement: path", 1)))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
