package fidelity

import (
	"context"
	"os"
	"testing"
	"time"

	"cclab/internal/runid"
	"cclab/orchestrator/cleanup"
	"cclab/orchestrator/flows"
	"cclab/orchestrator/health"
	"cclab/orchestrator/netbuild"
	"cclab/topology"
)

// TestLinkRateOnLosslessPorts: the verdict's `link rate` check, with the
// health sampler a run uses, on lossless ports (TBF roots with a 4-frame
// burst, docs/lossless.md) of topologies/line-3.yaml at 100 Mbit/s, one
// bulk TCP flow each way for 3 s: the check passes, and the busiest port
// carried the link rate on average (within 5 %: the small burst does not
// under-shoot).
func TestLinkRateOnLosslessPorts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root (namespaces)")
	}
	p, err := topology.Load("../../topologies/line-3.yaml")
	if err != nil {
		t.Fatal(err)
	}
	opt := netbuild.DefaultOptions()
	opt.Lossless, opt.SharedBuffer = true, 1<<20
	id := runid.New()
	t.Cleanup(func() { cleanup.Clean(context.Background(), id) })
	n, err := netbuild.Up(t.Context(), id, p, opt)
	if err != nil {
		t.Fatal(err)
	}
	var ends []health.LinkEnd
	var nss []string
	for _, e := range p.Egress() {
		ends = append(ends, health.LinkEnd{Node: e.Node, Netns: n.Netns(e.Node), Iface: e.Iface, ConfigBps: e.Rate.BitsPerSecond()})
	}
	hosts := map[string]flows.Host{}
	for _, nd := range p.Nodes {
		nss = append(nss, n.Netns(nd.Name))
		if nd.Role == topology.Host {
			hosts[nd.Name] = flows.Host{Netns: n.Netns(nd.Name), Addr: nd.Addr}
		}
	}
	s := health.StartSampler(ends, health.SamplerOptions{Interval: 100 * time.Millisecond, Namespaces: nss})
	res, err := flows.Run(t.Context(), []flows.Spec{
		{ID: 1, Src: "h0", Dst: "h1", Stop: 3 * time.Second},
		{ID: 2, Src: "h1", Dst: "h0", Stop: 3 * time.Second},
	}, flows.Options{Hosts: hosts})
	r := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res {
		if !f.OK() {
			t.Fatalf("flow %+v", f)
		}
	}
	v := Judge(Inputs{Health: r}, DefaultLimits())
	var busiest health.LinkRate
	for _, l := range r.Links {
		if l.MeanBps > busiest.MeanBps {
			busiest = l
		}
	}
	for _, c := range v.Checks {
		if c.Name != "link rate" {
			continue
		}
		t.Logf("link rate: %.4f x (bound %.4f): %s; busiest on average %s/%s at %.2f Mbit/s", c.Value, c.Limit, c.Detail, busiest.Node, busiest.Iface, float64(busiest.MeanBps)/1e6)
		if !c.OK {
			t.Errorf("link rate check failed on lossless ports: %s", c.Detail)
		}
		if m := float64(busiest.MeanBps); m < 0.95*float64(busiest.ConfigBps) {
			t.Errorf("busiest port %s/%s carried %.2f Mbit/s on average, configured %d", busiest.Node, busiest.Iface, m/1e6, busiest.ConfigBps)
		}
		return
	}
	t.Fatalf("no link rate check in %+v", v.Checks)
}
