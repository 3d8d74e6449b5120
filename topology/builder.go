package topology

import (
	"fmt"
	"net/netip"
)

// The address plan (RFC 2544 benchmarking range, never routed outside):
// hosts are 198.18.0.0/16 (a /32 each, their identity), and each link is a
// /31 in 198.19.0.0/16. A host's end of a link carries the host's /32; the
// switch's end carries its half of the /31 and is the host's gateway.
var (
	hostNet = netip.MustParsePrefix("198.18.0.0/16")
	linkNet = netip.MustParsePrefix("198.19.0.0/16")
)

// Limits of the address plan.
const (
	MaxHosts = 65534
	MaxLinks = 32768
)

// HostIface is the name of a host's only interface. A switch names each
// port after the node at its other end, so `ip link` in a switch reads as
// its wiring.
const HostIface = "eth0"

// builder accumulates nodes and links while a planner runs; plan() then
// names interfaces and hands out addresses.
type builder struct {
	nodes []Node
	index map[string]int
	links []Link
}

func newBuilder() *builder { return &builder{index: map[string]int{}} }

func (b *builder) add(name string, role Role, tier string) string {
	b.index[name] = len(b.nodes)
	b.nodes = append(b.nodes, Node{Name: name, Role: role, Tier: tier})
	return name
}

func (b *builder) host(name string) string { return b.add(name, Host, "host") }

func (b *builder) sw(name, tier string) string { return b.add(name, Switch, tier) }

// link joins two nodes with the configuration of tier.
func (b *builder) link(a, c, tier string, ls LinkSpec) {
	l := Link{
		A: Port{Node: a}, B: Port{Node: c}, Tier: tier,
		Rate: ls.Rate, Buffer: ls.Buffer, Delay: ls.Delay,
	}
	if b.nodes[b.index[a]].Role == Host || b.nodes[b.index[c]].Role == Host {
		l.HostBuffer = ls.HostBuffer
	}
	b.links = append(b.links, l)
}

// renameNode changes a node's name everywhere.
func (b *builder) renameNode(old, nu string) {
	i := b.index[old]
	b.nodes[i].Name = nu
	for j := range b.links {
		if b.links[j].A.Node == old {
			b.links[j].A.Node = nu
		}
		if b.links[j].B.Node == old {
			b.links[j].B.Node = nu
		}
	}
}

// counts checks the plan fits the address plan.
func (b *builder) counts() error {
	hosts := 0
	for _, n := range b.nodes {
		if n.Role == Host {
			hosts++
		}
	}
	if hosts > MaxHosts {
		return fmt.Errorf("%d hosts: the address plan holds %d", hosts, MaxHosts)
	}
	if len(b.links) > MaxLinks {
		return fmt.Errorf("%d links: the address plan holds %d", len(b.links), MaxLinks)
	}
	return nil
}

// plan names interfaces and assigns addresses.
func (b *builder) plan(name, kind string) *Plan {
	p := &Plan{Name: name, Kind: kind, Nodes: b.nodes, Links: b.links}
	role := map[string]Role{}
	hostAddr := map[string]netip.Addr{}
	next := hostNet.Addr().Next() // 198.18.0.1
	for i := range p.Nodes {
		n := &p.Nodes[i]
		role[n.Name] = n.Role
		if n.Role == Host {
			n.Addr = next
			hostAddr[n.Name] = next
			next = next.Next()
		}
	}
	la := linkNet.Addr()
	for i := range p.Links {
		l := &p.Links[i]
		a, c := la, la.Next()
		la = c.Next()
		l.A.Addr = netip.PrefixFrom(a, 31)
		l.B.Addr = netip.PrefixFrom(c, 31)
		l.A.Iface, l.B.Iface = l.B.Node, l.A.Node
		if role[l.A.Node] == Host {
			l.A.Iface = HostIface
			l.A.Addr = netip.PrefixFrom(hostAddr[l.A.Node], 32)
		}
		if role[l.B.Node] == Host {
			l.B.Iface = HostIface
			l.B.Addr = netip.PrefixFrom(hostAddr[l.B.Node], 32)
		}
	}
	return p
}
