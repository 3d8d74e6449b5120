package netbuild

import (
	"encoding/binary"
	"fmt"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"cclab/internal/units"
	"cclab/topology"
)

// A lossless port (Options.Lossless, docs/lossless.md "Ports") has a TBF
// root 1: at the link rate over the same byte FIFO 10:, instead of HTB:
// a pause is a change of the TBF (tbf_change keeps the FIFO and its
// packets), which HTB cannot do (its class keeps its token debt). The
// burst is a few frames, so that a resume does not dump a large burst
// at veth speed; every frame must fit it (tbf_enqueue drops a larger
// one), so lossless ports have segmentation offloads off.
const (
	// MTUFrame is the largest frame on a lossless port.
	MTUFrame = 1514
	// TBFBurst is the lossless ports' burst: 4 frames, 485 us at 100
	// Mbit/s.
	TBFBurst = 4 * MTUFrame
)

// tcTbfQopt is struct tc_tbf_qopt: rate and peakrate (tc_ratespec, 12
// bytes each), limit, buffer, mtu.
const tcTbfQoptLen = 36

// TBFRequest is the RTM_NEWQDISC request of port ifindex's TBF root
// (handle 1:): rate, burst bytes (TCA_TBF_BURST, also the largest frame
// it passes), and limit, the FIFO's limit, which tbf_change sets on the
// FIFO under it every time (fifo_set_limit): pass the port's own. flags
// are NLM_F_CREATE|NLM_F_EXCL to add it, 0 to change it.
func TBFRequest(ifindex int, rate units.Rate, burst, limit uint32, flags int) *nl.NetlinkRequest {
	req := nl.NewNetlinkRequest(unix.RTM_NEWQDISC, flags|unix.NLM_F_ACK)
	req.AddData(&nl.TcMsg{Family: nl.FAMILY_ALL, Ifindex: int32(ifindex), Handle: HTBHandle, Parent: netlink.HANDLE_ROOT})
	req.AddData(nl.NewRtAttr(nl.TCA_KIND, nl.ZeroTerminated("tbf")))
	opts := nl.NewRtAttr(nl.TCA_OPTIONS, nil)
	qopt := make([]byte, tcTbfQoptLen)
	bytesPerSec := rate.BitsPerSecond() / 8
	qopt[1] = 1 // rate.linklayer = TC_LINKLAYER_ETHERNET: no rate table
	binary.NativeEndian.PutUint32(qopt[8:], uint32(min(bytesPerSec, 1<<32-1)))
	binary.NativeEndian.PutUint32(qopt[24:], limit)
	opts.AddRtAttr(nl.TCA_TBF_PARMS, qopt)
	if bytesPerSec >= 1<<32 {
		opts.AddRtAttr(nl.TCA_TBF_RATE64, nl.Uint64Attr(bytesPerSec))
	}
	opts.AddRtAttr(nl.TCA_TBF_BURST, nl.Uint32Attr(burst))
	req.AddData(opts)
	return req
}

// shapeLossless installs a lossless port: the TBF root (its limit 0, so
// that it makes no FIFO of its own) and the FIFO 10: under it, of the
// port's buffer, or of the shared buffer on a switch.
func shapeLossless(n *nsNode, idx int, e topology.EgressPort, opt Options) error {
	req := TBFRequest(idx, e.Rate, TBFBurst, 0, unix.NLM_F_CREATE|unix.NLM_F_EXCL)
	req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_ROUTE: {Socket: n.raw}}
	if _, err := req.Execute(unix.NETLINK_ROUTE, 0); err != nil {
		return fmt.Errorf("tbf on %s %s: %w", e.Node, e.Iface, err)
	}
	return addBfifo(n, idx, TBFClass, QueueHandle, uint32(LosslessLimit(e, opt)), e)
}

// TBFClass is the TBF root's one class, the FIFO's parent.
var TBFClass = ClassHandle

// LosslessLimit is a lossless port's FIFO limit: a switch port's is the
// shared buffer (Options.SharedBuffer; only PFC bounds its queue), a
// host's its own buffer.
func LosslessLimit(e topology.EgressPort, opt Options) units.Size {
	if e.Role == topology.Switch && opt.SharedBuffer > 0 {
		return opt.SharedBuffer
	}
	return e.Buffer
}
