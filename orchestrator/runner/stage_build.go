package runner

import (
	"context"
	"fmt"
	"net/netip"
	"slices"

	"cclab/orchestrator/capture"
	"cclab/orchestrator/cpuqueue"
	"cclab/orchestrator/delay"
	"cclab/orchestrator/experiment"
	"cclab/orchestrator/flows"
	"cclab/orchestrator/netbuild"
)

// buildStage builds the network, the CPU queue probe beside it and the
// delay line that serves both.
type buildStage struct{ *variantRun }

func (buildStage) Name() string { return "build" }

func (r buildStage) Start(ctx context.Context) error {
	p := r.p
	fmt.Fprintf(r.opt.Log, "[%s] building %s (%d nodes, %d links)\n", r.v.CC, p.Plan.Name, len(p.Plan.Nodes), len(p.Plan.Links))
	var err error
	if r.net, err = netbuild.Up(ctx, r.opt.ID, p.Plan, r.rj.Hosts); err != nil {
		return err
	}
	r.rj.BuildTiming = r.net.Timing

	// The CPU queue probe: a chain as long as the longest path, made
	// before the delay line steers packet work, so that its packets are
	// processed where the fabric's are.
	if lp := longestPath(p.Plan, nil); lp.Switches > 0 || len(p.Plan.Hosts()) >= 2 {
		if r.cpuProbe, err = cpuqueue.Attach(r.opt.ID, lp.Switches+1); err != nil {
			return err
		}
	}
	var steer []string
	if experiment.On(p.Exp.Emulation.Steer, true) {
		steer = r.net.Namespaces()
		if r.cpuProbe != nil {
			steer = append(steer, r.cpuProbe.Namespaces()...)
		}
	}
	if r.dl, err = r.net.ServeDelay(ctx, delay.ServeOptions{CPU: -1, Steer: steer}); err != nil {
		return err
	}

	r.hosts = map[string]flows.Host{}
	for _, h := range p.Plan.Hosts() {
		r.hosts[h.Name] = flows.Host{Netns: r.net.Netns(h.Name), Addr: h.Addr}
		if port, _, ok := p.Plan.HostPort(h.Name); ok {
			r.ports = append(r.ports, capture.Port{Host: h.Name, Netns: r.net.Netns(h.Name), Iface: port.Iface,
				Redelivered: redelivery(r.net.Delay, h.Name, port.Iface)})
		}
	}
	return nil
}

// Stop stops the delay line (unless collect did), closes the probe and
// takes the network down, in the reverse of their making.
func (r buildStage) Stop(ctx context.Context) error {
	r.stopLine()
	if r.cpuProbe != nil {
		r.cpuProbe.Close()
	}
	if r.net == nil {
		return nil
	}
	if err := r.net.Down(ctx); err != nil {
		return fmt.Errorf("tear down: %w", err)
	}
	return nil
}

// redelivery says whether a host's port serves its link's delay (link
// placement), and for packets from which sources: the capture there sees
// each of them twice.
func redelivery(pl *delay.Placement, host, iface string) *capture.Redelivery {
	if !pl.Link() {
		return nil
	}
	for _, p := range pl.Ports {
		if p.Node != host || p.Iface != iface {
			continue
		}
		re := &capture.Redelivery{Mark: delay.Mark}
		for src := range p.Sources {
			re.Sources = append(re.Sources, src)
		}
		slices.SortFunc(re.Sources, func(a, b netip.Addr) int { return a.Compare(b) })
		return re
	}
	return nil
}
