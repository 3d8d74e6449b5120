package netbuild

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"

	"cclab/topology"
)

// tcpMSS is the segment InitRwnd is counted in: a 1500-byte MTU's, with
// 12 bytes of options (the route metric is in segments).
const tcpMSS = 1448

func ipNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

// addRoutes installs a switch's table: one route per host with every
// equal-cost next hop (onlink: the gateway is the peer's end of a /31 on
// that port, so the kernel need not look it up).
func addRoutes(n *nsNode, routes []topology.Route) error {
	return putRoutes(n, routes, n.h.RouteAdd)
}

// replaceRoutes puts back routes a link going down withdrew.
func replaceRoutes(n *nsNode, routes []topology.Route) error {
	return putRoutes(n, routes, n.h.RouteReplace)
}

func putRoutes(n *nsNode, routes []topology.Route, put func(*netlink.Route) error) error {
	for _, r := range routes {
		rt := &netlink.Route{Dst: ipNet(r.Dst)}
		if len(r.NextHops) == 1 {
			nh := r.NextHops[0]
			rt.LinkIndex = n.ifindex[nh.Iface]
			if nh.Gateway.IsValid() {
				rt.Gw = net.IP(nh.Gateway.AsSlice())
				rt.Flags = int(netlink.FLAG_ONLINK)
			} else {
				rt.Scope = netlink.SCOPE_LINK
			}
		} else {
			for _, nh := range r.NextHops {
				rt.MultiPath = append(rt.MultiPath, &netlink.NexthopInfo{
					LinkIndex: n.ifindex[nh.Iface],
					Gw:        net.IP(nh.Gateway.AsSlice()),
					Flags:     int(netlink.FLAG_ONLINK),
				})
			}
		}
		if err := put(rt); err != nil {
			return fmt.Errorf("route to %s on %s: %w", r.Dst, n.node.Name, err)
		}
	}
	return nil
}

// addDefault gives a host its only route: default via the switch end of
// its link, onlink (the host holds just a /32, no subnet to the gateway),
// with the receive window Options.InitRwnd asks for (bytes; 0 the kernel's).
func addDefault(n *nsNode, iface string, gw netip.Addr, opt Options) error {
	if err := n.h.RouteAdd(hostDefault(n.ifindex[iface], gw, opt)); err != nil {
		return fmt.Errorf("default route on %s: %w", n.node.Name, err)
	}
	return nil
}

// hostDefault is a host's default route through gw: its metrics carry the
// options' initial receive window (in segments) and rto_min (ms, locked:
// tcp_rto_min reads the metric only when it is locked).
func hostDefault(ifindex int, gw netip.Addr, opt Options) *netlink.Route {
	return &netlink.Route{
		LinkIndex:  ifindex,
		Gw:         net.IP(gw.AsSlice()),
		Flags:      int(netlink.FLAG_ONLINK),
		InitRwnd:   (opt.InitRwnd + tcpMSS - 1) / tcpMSS,
		RtoMin:     int(opt.RTOMin.Milliseconds()),
		RtoMinLock: opt.RTOMin > 0,
	}
}
