package netbuild

import (
	"encoding/binary"
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"cclab/orchestrator/topology"
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

// shape installs the port's egress: HTB at the link rate with an explicit
// burst, then a byte-limited FIFO of the port's buffer.
func shape(n *nsNode, idx int, e topology.EgressPort) error {
	htb := netlink.NewHtb(netlink.QdiscAttrs{LinkIndex: idx, Handle: HTBHandle, Parent: netlink.HANDLE_ROOT})
	htb.Defcls = 1
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
	return addBfifo(n, idx, ClassHandle, QueueHandle, uint32(e.Buffer), e)
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
