package testnet

import (
	"fmt"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// A QdiscReader reads an interface's root qdisc counters over netlink,
// the kernel's own account of a port, for tests to check against.
type QdiscReader struct {
	h    *netlink.Handle
	link netlink.Link
}

// QdiscStats are a root qdisc's counters when read.
type QdiscStats struct {
	Bytes, Packets, Drops, Backlog uint64
	At                             time.Time
}

// RootQdisc opens a reader of iface's root qdisc in the named namespace,
// closed when the test ends.
func RootQdisc(t testing.TB, ns, iface string) *QdiscReader {
	t.Helper()
	h, err := netns.GetFromName(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	nh, err := netlink.NewHandleAt(h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nh.Close)
	l, err := nh.LinkByName(iface)
	if err != nil {
		t.Fatal(err)
	}
	return &QdiscReader{h: nh, link: l}
}

// Read returns the counters (safe from any goroutine: it returns errors).
func (q *QdiscReader) Read() (QdiscStats, error) {
	qs, err := q.h.QdiscList(q.link)
	if err != nil {
		return QdiscStats{}, fmt.Errorf("qdiscs of %s: %w", q.link.Attrs().Name, err)
	}
	for _, d := range qs {
		a := d.Attrs()
		if a.Parent != netlink.HANDLE_ROOT || a.Statistics == nil || a.Statistics.Basic == nil || a.Statistics.Queue == nil {
			continue
		}
		s := a.Statistics
		return QdiscStats{Bytes: s.Basic.Bytes, Packets: uint64(s.Basic.Packets), Drops: uint64(s.Queue.Drops),
			Backlog: uint64(s.Queue.Backlog), At: time.Now()}, nil
	}
	return QdiscStats{}, fmt.Errorf("no root qdisc statistics on %s", q.link.Attrs().Name)
}
