package netbuild

import (
	"fmt"

	"github.com/vishvananda/netlink"
)

// PortQdisc is a port's root qdisc as the kernel counts it.
type PortQdisc struct {
	Node    string `json:"node"`
	Iface   string `json:"iface"`
	Drops   uint64 `json:"drops"`
	Backlog uint64 `json:"backlog_bytes"`
}

// QdiscCounts reads the root qdisc of every egress port of the plan
// (switches' and hosts'), in the plan's egress order: a lossless run's
// account of what its queues dropped (the qdisc's own counter, which
// misses nothing, unlike the switch's tracepoint counts).
func (c *Changer) QdiscCounts() ([]PortQdisc, error) {
	var out []PortQdisc
	for _, e := range c.net.Plan.Egress() {
		n, idx, err := c.port(e.Node, e.Iface)
		if err != nil {
			return nil, fmt.Errorf("qdisc counts: %w", err)
		}
		qs, err := n.h.QdiscList(&netlink.Dummy{LinkAttrs: netlink.LinkAttrs{Index: idx}})
		if err != nil {
			return nil, fmt.Errorf("qdisc counts of %s %s: %w", e.Node, e.Iface, err)
		}
		for _, q := range qs {
			a := q.Attrs()
			if a.Parent != netlink.HANDLE_ROOT || a.Statistics == nil || a.Statistics.Queue == nil {
				continue
			}
			out = append(out, PortQdisc{Node: e.Node, Iface: e.Iface, Drops: uint64(a.Statistics.Queue.Drops), Backlog: uint64(a.Statistics.Queue.Backlog)})
			break
		}
	}
	return out, nil
}
