package intswitch

import (
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// qdiscReader reads a port's root qdisc statistics over netlink, the
// kernel's own account the switch's measurements are checked against.
type qdiscReader struct {
	h    *netlink.Handle
	link netlink.Link
}

func (n *testNet) qdiscReader(node, iface string) *qdiscReader {
	n.t.Helper()
	nsh, err := netns.GetFromName(n.ns(node))
	if err != nil {
		n.t.Fatal(err)
	}
	defer nsh.Close()
	h, err := netlink.NewHandleAt(nsh)
	if err != nil {
		n.t.Fatal(err)
	}
	n.t.Cleanup(h.Close)
	l, err := h.LinkByName(iface)
	if err != nil {
		n.t.Fatal(err)
	}
	return &qdiscReader{h: h, link: l}
}

type qdiscStats struct {
	bytes, pkts, drops, backlog uint64
}

func (q *qdiscReader) read(t testing.TB) qdiscStats {
	t.Helper()
	qs, err := q.h.QdiscList(q.link)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range qs {
		a := d.Attrs()
		if a.Parent != netlink.HANDLE_ROOT || a.Statistics == nil || a.Statistics.Basic == nil || a.Statistics.Queue == nil {
			continue
		}
		s := a.Statistics
		return qdiscStats{bytes: s.Basic.Bytes, pkts: uint64(s.Basic.Packets),
			drops: uint64(s.Queue.Drops), backlog: uint64(s.Queue.Backlog)}
	}
	t.Fatalf("no root qdisc statistics on %s", q.link.Attrs().Name)
	return qdiscStats{}
}
