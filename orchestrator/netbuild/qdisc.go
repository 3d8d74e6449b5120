package netbuild

import (
	"encoding/binary"
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"cclab/topology"
)

// Qdisc handles of every port: HTB root 1:, its one class 1:1 (the link
// rate), the byte FIFO 10: under it (the buffer). Propagation delay is not
// a port's qdisc: it is added before the last switch port of each path
// (orchestrator/delay), so that a port's queue holds only its queue.
var (
	HTBHandle   = netlink.MakeHandle(1, 0)
	ClassHandle = netlink.MakeHandle(1, 1)
	QueueHandle = netlink.MakeHandle(0x10, 0)
)

// A host port with Options.NICQueues > 1 has, under 1:1, one HTB class
// per queue, 1:100 + i, each with its own byte FIFO 200 + i: of the
// port's buffer. HTB serves the busy ones round robin, a quantum of one
// full-size frame each (deficit round robin), as a NIC serves its queue
// pairs. 1:100 takes what no socket placed (probes, ACKs, iperf3);
// NICClass places a flow.
const (
	nicLeafMinor  = 0x100
	nicQueueMajor = 0x200
	nicQuantum    = 1514
)

// NICClass is the SO_PRIORITY that puts flow id's packets into one of a
// host NIC's queues (the HTB class 1:101 + id mod (queues - 1)); 0 with
// one queue (the socket's default priority).
func NICClass(id, queues int) uint32 {
	if queues <= 1 {
		return 0
	}
	return netlink.MakeHandle(1, uint16(nicLeafMinor+1+id%(queues-1)))
}

// shape installs the port's egress: HTB at the link rate with an explicit
// burst, then a byte-limited FIFO of the port's buffer (one per queue on
// a host's port with several NIC queues); in a lossless network a TBF
// root over the FIFO instead (tbf.go).
func shape(n *nsNode, idx int, e topology.EgressPort, opt Options) error {
	if opt.Lossless {
		return shapeLossless(n, idx, e, opt)
	}
	htb := netlink.NewHtb(netlink.QdiscAttrs{LinkIndex: idx, Handle: HTBHandle, Parent: netlink.HANDLE_ROOT})
	htb.Defcls = 1
	queues := e.Role == topology.Host && opt.NICQueues > 1
	if queues {
		htb.Defcls = nicLeafMinor
	}
	if err := n.h.QdiscAdd(htb); err != nil {
		return fmt.Errorf("htb on %s %s: %w", e.Node, e.Iface, err)
	}
	cls := netlink.NewHtbClass(
		netlink.ClassAttrs{LinkIndex: idx, Parent: HTBHandle, Handle: ClassHandle},
		netlink.HtbClassAttrs{
			Rate: uint64(e.Rate), Ceil: uint64(e.Rate),
			Buffer: HTBBurst, Cbuffer: HTBBurst,
			// One class: the quantum only has to hold a packet; setting it
			// stops HTB warning that rate/r2q is out of range.
			Quantum: 64 << 10,
		})
	if err := n.h.ClassAdd(cls); err != nil {
		return fmt.Errorf("htb class on %s %s: %w", e.Node, e.Iface, err)
	}
	if queues {
		return nicQueues(n, idx, e, opt.NICQueues)
	}
	return addBfifo(n, idx, ClassHandle, QueueHandle, uint32(e.Buffer), e)
}

// nicQueues makes the host port's round-robin queues under 1:1; shape
// made the first HTB's default class (it must be a leaf, or unplaced
// packets would bypass the rate).
func nicQueues(n *nsNode, idx int, e topology.EgressPort, queues int) error {
	share := max(uint64(e.Rate)/uint64(queues), 8000)
	for i := range queues {
		minor := uint16(nicLeafMinor + i)
		handle := netlink.MakeHandle(1, minor)
		cls := netlink.NewHtbClass(
			netlink.ClassAttrs{LinkIndex: idx, Parent: ClassHandle, Handle: handle},
			netlink.HtbClassAttrs{
				Rate: share, Ceil: uint64(e.Rate),
				Buffer: HTBBurst, Cbuffer: HTBBurst,
				Quantum: nicQuantum,
			})
		if err := n.h.ClassAdd(cls); err != nil {
			return fmt.Errorf("NIC queue %d on %s %s: %w", i, e.Node, e.Iface, err)
		}
		if err := addBfifo(n, idx, handle, netlink.MakeHandle(uint16(nicQueueMajor+i), 0), uint32(e.Buffer), e); err != nil {
			return err
		}
	}
	return nil
}

// addBfifo adds a bfifo, which the netlink library has no type for:
// TCA_KIND "bfifo" and TCA_OPTIONS struct tc_fifo_qopt { __u32 limit; }.
func addBfifo(n *nsNode, idx int, parent, handle uint32, limit uint32, e topology.EgressPort) error {
	req := nl.NewNetlinkRequest(unix.RTM_NEWQDISC, unix.NLM_F_CREATE|unix.NLM_F_EXCL|unix.NLM_F_ACK)
	req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_ROUTE: {Socket: n.raw}}
	req.AddData(&nl.TcMsg{Family: nl.FAMILY_ALL, Ifindex: int32(idx), Handle: handle, Parent: parent})
	req.AddData(nl.NewRtAttr(nl.TCA_KIND, nl.ZeroTerminated("bfifo")))
	opt := make([]byte, 4)
	binary.NativeEndian.PutUint32(opt, limit)
	req.AddData(nl.NewRtAttr(nl.TCA_OPTIONS, opt))
	if _, err := req.Execute(unix.NETLINK_ROUTE, 0); err != nil {
		return fmt.Errorf("bfifo on %s %s: %w", e.Node, e.Iface, err)
	}
	return nil
}
