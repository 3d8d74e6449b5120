package health

import (
	"net"
	"net/netip"
	"runtime"
	"testing"

	"cclab/internal/runid"
	"cclab/orchestrator/flows"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// pair makes two namespaces of a fresh test run id joined by one veth
// (10.99.0.1 <-> 10.99.0.2) and removes exactly them when the test ends.
func pair(t *testing.T) (a, b flows.Host) {
	t.Helper()
	id := runid.New()
	names := []string{id.Netns("a"), id.Netns("b")}
	addrs := []netip.Addr{netip.MustParseAddr("10.99.0.1"), netip.MustParseAddr("10.99.0.2")}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	var handles []netns.NsHandle
	for _, n := range names {
		h, err := netns.NewNamed(n) // also switches this thread into it
		if err != nil {
			netns.Set(orig)
			t.Fatal(err)
		}
		handles = append(handles, h)
		t.Cleanup(func() { netns.DeleteNamed(n) })
	}
	if err := netns.Set(orig); err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, h := range handles {
			h.Close()
		}
	}()
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "cc" + string(id) + "a"}, PeerName: "cc" + string(id) + "b"}
	if err := netlink.LinkAdd(veth); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{veth.Name, veth.PeerName} {
		l, err := netlink.LinkByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := netlink.LinkSetNsFd(l, int(handles[i])); err != nil {
			t.Fatal(err)
		}
		nh, err := netlink.NewHandleAt(handles[i])
		if err != nil {
			t.Fatal(err)
		}
		l, err = nh.LinkByName(name)
		if err == nil {
			err = nh.AddrAdd(l, &netlink.Addr{IPNet: &net.IPNet{IP: addrs[i].AsSlice(), Mask: net.CIDRMask(24, 32)}})
		}
		if err == nil {
			err = nh.LinkSetUp(l)
		}
		if err == nil {
			lo, _ := nh.LinkByName("lo")
			err = nh.LinkSetUp(lo)
		}
		nh.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return flows.Host{Netns: names[0], Addr: addrs[0]}, flows.Host{Netns: names[1], Addr: addrs[1]}
}

// vethNames returns the veth ends pair gave a and b.
func vethNames(t *testing.T, a, b flows.Host) (string, string) {
	id, _, ok := runid.FromNetns(a.Netns)
	if !ok {
		t.Fatalf("namespace %s", a.Netns)
	}
	return "cc" + string(id) + "a", "cc" + string(id) + "b"
}
