package netbuild

import (
	"encoding/binary"
	"fmt"
	"path/filepath"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"cclab/internal/units"
	"cclab/orchestrator/cleanup"
	"cclab/topology"
)

// A Changer changes a built network's ports while it runs (`cclab link
// set`, an experiment's events): a port's rate (its HTB class) and
// buffer (its byte FIFO), and a link's state. It keeps a netlink handle
// per namespace it touched, so that a change costs a few requests; Close
// releases them (an open handle would keep a namespace alive).
type Changer struct {
	net   *Network
	nodes map[string]*nsNode
}

// Changer returns a Changer of n.
func (n *Network) Changer() *Changer { return &Changer{net: n, nodes: map[string]*nsNode{}} }

// Close releases the handles.
func (c *Changer) Close() {
	for _, n := range c.nodes {
		n.close()
	}
	c.nodes = map[string]*nsNode{}
}

// node opens (once) the handles of a node's namespace.
func (c *Changer) node(name string) (*nsNode, error) {
	if n, ok := c.nodes[name]; ok {
		return n, nil
	}
	nd, ok := c.net.Plan.Node(name)
	if !ok {
		return nil, fmt.Errorf("no node %s", name)
	}
	n := &nsNode{node: nd, ns: c.net.Netns(name)}
	var err error
	if n.fd, err = netns.GetFromPath(filepath.Join(cleanup.NetnsDir, n.ns)); err != nil {
		return nil, fmt.Errorf("namespace of %s: %w", name, err)
	}
	if n.h, err = netlink.NewHandleAt(n.fd); err == nil {
		n.raw, err = nl.GetNetlinkSocketAt(n.fd, netns.None(), unix.NETLINK_ROUTE)
	}
	if err != nil {
		n.close()
		return nil, fmt.Errorf("netlink in %s: %w", n.ns, err)
	}
	links, err := n.h.LinkList()
	if err != nil {
		n.close()
		return nil, fmt.Errorf("list links of %s: %w", n.ns, err)
	}
	n.ifindex = map[string]int{}
	for _, l := range links {
		n.ifindex[l.Attrs().Name] = l.Attrs().Index
	}
	c.nodes[name] = n
	return n, nil
}

// nicQueues is how many round-robin queues node's port has (shape): 0
// for a port with one FIFO.
func (c *Changer) nicQueues(n *nsNode) int {
	if n.node.Role == topology.Host && c.net.Options.NICQueues > 1 {
		return c.net.Options.NICQueues
	}
	return 0
}

func (c *Changer) port(node, iface string) (*nsNode, int, error) {
	n, err := c.node(node)
	if err != nil {
		return nil, 0, err
	}
	idx, ok := n.ifindex[iface]
	if !ok {
		return nil, 0, fmt.Errorf("%s has no interface %s", node, iface)
	}
	return n, idx, nil
}

// SetRate changes the rate of a port's HTB class (rate and ceiling), with
// the burst every port is built with.
func (c *Changer) SetRate(node, iface string, rate units.Rate) error {
	if c.net.Options.Lossless {
		return fmt.Errorf("rate of %s %s: rate changes of a lossless port's TBF are not built yet", node, iface)
	}
	n, idx, err := c.port(node, iface)
	if err != nil {
		return err
	}
	cls := netlink.NewHtbClass(
		netlink.ClassAttrs{LinkIndex: idx, Parent: HTBHandle, Handle: ClassHandle},
		netlink.HtbClassAttrs{Rate: uint64(rate), Ceil: uint64(rate), Buffer: HTBBurst, Cbuffer: HTBBurst, Quantum: 64 << 10})
	if err := n.h.ClassChange(cls); err != nil {
		return fmt.Errorf("rate of %s %s: %w", node, iface, err)
	}
	// A host's NIC queues share the port (nicQueues): each its share,
	// up to the whole rate.
	queues := c.nicQueues(n)
	for i := range queues {
		q := netlink.NewHtbClass(
			netlink.ClassAttrs{LinkIndex: idx, Parent: ClassHandle, Handle: netlink.MakeHandle(1, uint16(nicLeafMinor+i))},
			netlink.HtbClassAttrs{Rate: max(uint64(rate)/uint64(queues), 8000), Ceil: uint64(rate),
				Buffer: HTBBurst, Cbuffer: HTBBurst, Quantum: nicQuantum})
		if err := n.h.ClassChange(q); err != nil {
			return fmt.Errorf("rate of %s %s queue %d: %w", node, iface, i, err)
		}
	}
	return nil
}

// SetBuffer changes the limit of a port's byte FIFO (tc qdisc change:
// what is queued stays; packets beyond a smaller limit are not dropped,
// new ones are refused until the queue is below it).
func (c *Changer) SetBuffer(node, iface string, limit units.Size) error {
	n, idx, err := c.port(node, iface)
	if err != nil {
		return err
	}
	if uint64(limit) > 1<<32-1 {
		return fmt.Errorf("buffer of %s %s: %v is beyond a FIFO's 32-bit limit", node, iface, limit)
	}
	// The port's FIFO, or each of its NIC queues' (shape).
	fifos := [][2]uint32{{ClassHandle, QueueHandle}}
	if queues := c.nicQueues(n); queues > 0 {
		fifos = fifos[:0]
		for i := range queues {
			fifos = append(fifos, [2]uint32{netlink.MakeHandle(1, uint16(nicLeafMinor+i)), netlink.MakeHandle(uint16(nicQueueMajor+i), 0)})
		}
	}
	for _, f := range fifos {
		req := nl.NewNetlinkRequest(unix.RTM_NEWQDISC, unix.NLM_F_ACK)
		req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_ROUTE: {Socket: n.raw}}
		req.AddData(&nl.TcMsg{Family: nl.FAMILY_ALL, Ifindex: int32(idx), Handle: f[1], Parent: f[0]})
		req.AddData(nl.NewRtAttr(nl.TCA_KIND, nl.ZeroTerminated("bfifo")))
		opt := make([]byte, 4)
		binary.NativeEndian.PutUint32(opt, uint32(limit))
		req.AddData(nl.NewRtAttr(nl.TCA_OPTIONS, opt))
		if _, err := req.Execute(unix.NETLINK_ROUTE, 0); err != nil {
			return fmt.Errorf("buffer of %s %s: %w", node, iface, err)
		}
	}
	return nil
}

// SetState takes a link down or up at both ends, as a cable pulled and
// put back: down, the kernel drops what the ports held and withdraws the
// routes through them (ECMP uses the other next hops); up, the routes the
// plan gives the two nodes are put back.
func (c *Changer) SetState(l topology.Link, up bool) error {
	for _, end := range []topology.Port{l.A, l.B} {
		n, idx, err := c.port(end.Node, end.Iface)
		if err != nil {
			return err
		}
		dev := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Index: idx, Name: end.Iface}}
		if up {
			err = n.h.LinkSetUp(dev)
		} else {
			err = n.h.LinkSetDown(dev)
		}
		if err != nil {
			return fmt.Errorf("state of %s %s: %w", end.Node, end.Iface, err)
		}
	}
	if !up {
		return nil
	}
	routes := c.net.Plan.Routes()
	for _, end := range []topology.Port{l.A, l.B} {
		n := c.nodes[end.Node]
		if n.node.Role == topology.Host {
			iface, gw, ok := c.net.Plan.Gateway(n.node.Name)
			if !ok {
				return fmt.Errorf("host %s has no link", n.node.Name)
			}
			if err := n.h.RouteReplace(hostDefault(n.ifindex[iface], gw, c.net.Options)); err != nil {
				return fmt.Errorf("default route of %s: %w", n.node.Name, err)
			}
			continue
		}
		if err := replaceRoutes(n, routes[end.Node]); err != nil {
			return err
		}
	}
	return nil
}
