// Package testnet gives tests a small real network: two fresh network
// namespaces of a test run joined by one veth pair, removed when the test
// ends. The veth is created inside the first namespace with its peer placed
// straight into the second, so nothing ever appears in the root namespace
// (a test that dies half-way leaves only namespaces that `cclab clean
// --all` finds by their prefix).
package testnet

import (
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"testing"

	"cclab/internal/runid"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// End is one side of the pair.
type End struct {
	Netns string     // namespace name
	Iface string     // the veth end in it
	Addr  netip.Addr // its address (198.18.0.1 or .2, RFC 2544 benchmarking range)
}

// Pair makes the two namespaces and the veth between them.
func Pair(t testing.TB) (a, b End) {
	t.Helper()
	id := runid.New()
	a = End{Netns: id.Netns("a"), Iface: "veth-a", Addr: netip.MustParseAddr("198.18.0.1")}
	b = End{Netns: id.Netns("b"), Iface: "veth-b", Addr: netip.MustParseAddr("198.18.0.2")}
	var handles []netns.NsHandle
	defer func() {
		for _, h := range handles {
			h.Close()
		}
	}()
	for _, n := range []string{a.Netns, b.Netns} {
		h, err := newNamed(n)
		if err != nil {
			t.Fatal(err)
		}
		handles = append(handles, h)
		t.Cleanup(func() { netns.DeleteNamed(n) })
	}
	ha, err := netlink.NewHandleAt(handles[0])
	if err != nil {
		t.Fatal(err)
	}
	defer ha.Close()
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: a.Iface}, PeerName: b.Iface, PeerNamespace: netlink.NsFd(handles[1])}
	if err := ha.LinkAdd(veth); err != nil {
		t.Fatalf("veth %s-%s: %v", a.Iface, b.Iface, err)
	}
	for i, e := range []End{a, b} {
		if err := configure(handles[i], e); err != nil {
			t.Fatal(err)
		}
	}
	return a, b
}

// newNamed creates a named namespace without leaving this thread in it.
func newNamed(name string) (netns.NsHandle, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		return 0, err
	}
	defer orig.Close()
	h, err := netns.NewNamed(name) // also moves this thread into it
	if err != nil {
		return 0, fmt.Errorf("create netns %s: %w", name, err)
	}
	if err := netns.Set(orig); err != nil {
		h.Close()
		return 0, fmt.Errorf("leave netns %s: %w", name, err)
	}
	return h, nil
}

// configure addresses the end (/24) and brings it and lo up.
func configure(ns netns.NsHandle, e End) error {
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return err
	}
	defer h.Close()
	l, err := h.LinkByName(e.Iface)
	if err != nil {
		return fmt.Errorf("%s in %s: %w", e.Iface, e.Netns, err)
	}
	addr := &netlink.Addr{IPNet: &net.IPNet{IP: e.Addr.AsSlice(), Mask: net.CIDRMask(24, 32)}}
	if err := h.AddrAdd(l, addr); err != nil {
		return fmt.Errorf("address %s: %w", e.Iface, err)
	}
	if err := h.LinkSetUp(l); err != nil {
		return fmt.Errorf("up %s: %w", e.Iface, err)
	}
	lo, err := h.LinkByName("lo")
	if err != nil {
		return err
	}
	return h.LinkSetUp(lo)
}
