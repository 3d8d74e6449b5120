package netbuild

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"cclab/orchestrator/delay"
	"cclab/topology"
)

// build creates the run's objects in three parallel phases: namespaces
// (with their sysctls), veth pairs, then per-namespace configuration
// (addresses, offloads, qdiscs, link up, routes).
func build(ctx context.Context, n *Network) error {
	p, opt := n.Plan, n.Options
	workers := opt.Workers
	if workers <= 0 {
		workers = 2 * runtime.NumCPU()
	}
	nodes := make([]*nsNode, len(p.Nodes))
	byName := map[string]*nsNode{}
	for i, nd := range p.Nodes {
		nodes[i] = &nsNode{node: nd, ns: n.Netns(nd.Name)}
		byName[nd.Name] = nodes[i]
	}
	defer func() {
		for _, nd := range nodes {
			nd.close()
		}
	}()
	for _, e := range p.Egress() {
		byName[e.Node].ports = append(byName[e.Node].ports, e)
	}
	routes := p.Routes()

	t := time.Now()
	restore, err := allowCC(opt.DefaultCC)
	if err != nil {
		return err
	}
	err = parallel(ctx, workers, len(nodes), func(i int) error {
		orig, err := netns.Get()
		if err != nil {
			return fmt.Errorf("get current netns: %w", err)
		}
		defer orig.Close()
		return createNamespace(nodes[i], orig, sysctlsFor(nodes[i].node, opt))
	})
	restore()
	if err != nil {
		return err
	}
	n.Timing.Namespaces = time.Since(t)

	t = time.Now()
	err = parallel(ctx, workers, len(p.Links), func(i int) error {
		l := p.Links[i]
		return createLink(byName[l.A.Node], byName[l.B.Node], l)
	})
	if err != nil {
		return err
	}
	n.Timing.Links = time.Since(t)

	t = time.Now()
	err = parallel(ctx, workers, len(nodes), func(i int) error {
		return configure(nodes[i], routes[nodes[i].node.Name], p, opt)
	})
	if err != nil {
		return err
	}
	n.Timing.Configure = time.Since(t)

	t = time.Now()
	err = delay.Plumb(ctx, n.Delay, delay.Options{Netns: n.Netns, PinDir: n.ID.BPFDir(), Engine: n.DelayEngine})
	if err != nil {
		return err
	}
	n.Timing.Delay = time.Since(t)
	return nil
}

// configure sets up every port of one namespace, then its routes.
func configure(n *nsNode, routes []topology.Route, p *topology.Plan, opt Options) error {
	links, err := n.h.LinkList()
	if err != nil {
		return fmt.Errorf("list links of %s: %w", n.ns, err)
	}
	n.ifindex = map[string]int{}
	for _, l := range links {
		n.ifindex[l.Attrs().Name] = l.Attrs().Index
	}
	for _, e := range n.ports {
		idx, ok := n.ifindex[e.Iface]
		if !ok {
			return fmt.Errorf("%s: interface %s missing after creation", n.node.Name, e.Iface)
		}
		link := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Index: idx, Name: e.Iface}}
		if err := n.h.AddrAdd(link, &netlink.Addr{IPNet: ipNet(e.Addr)}); err != nil {
			return fmt.Errorf("address %s on %s %s: %w", e.Addr, e.Node, e.Iface, err)
		}
		if n.features == nil {
			// Feature names are the kernel's, the same for every device.
			if n.features, err = featureNames(n.ethtool, e.Iface); err != nil {
				return fmt.Errorf("%s: %w", e.Node, err)
			}
		}
		if err := setOffloads(n.ethtool, e.Iface, n.features, portOffloads(opt)); err != nil {
			return fmt.Errorf("%s: %w", e.Node, err)
		}
		if opt.GSOMaxSize > 0 {
			if err := n.h.LinkSetGSOMaxSize(link, opt.GSOMaxSize); err != nil {
				return fmt.Errorf("gso_max_size on %s %s: %w", e.Node, e.Iface, err)
			}
		}
		if err := shape(n, idx, e, opt); err != nil {
			return err
		}
		if err := n.h.LinkSetUp(link); err != nil {
			return fmt.Errorf("up %s %s: %w", e.Node, e.Iface, err)
		}
	}
	if n.node.Role == topology.Host {
		iface, gw, ok := p.Gateway(n.node.Name)
		if !ok {
			return fmt.Errorf("host %s has no link", n.node.Name)
		}
		return addDefault(n, iface, gw, opt)
	}
	return addRoutes(n, routes)
}
