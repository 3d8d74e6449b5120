package netbuild

import (
	"fmt"

	"github.com/vishvananda/netlink"

	"cclab/topology"
)

// createLink makes the veth pair of link l directly in its two namespaces:
// the request goes through A's netlink socket (so the A end is born in A)
// and names B's namespace for the peer. Nothing passes through the root
// namespace.
func createLink(a, b *nsNode, l topology.Link) error {
	v := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: l.A.Iface, MTU: topology.MTU, TxQLen: 1000},
		PeerName:      l.B.Iface,
		PeerNamespace: netlink.NsFd(b.fd),
	}
	if err := a.h.LinkAdd(v); err != nil {
		return fmt.Errorf("create link %s:%s - %s:%s: %w", l.A.Node, l.A.Iface, l.B.Node, l.B.Iface, err)
	}
	return nil
}
