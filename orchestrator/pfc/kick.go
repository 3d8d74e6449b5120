package pfc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"cclab/internal/nsexec"
)

// KickEthertype is the kick frames' EtherType: IEEE 802's first local
// experimental one, which nothing here speaks.
const KickEthertype = 0x88b5

// kickLen is a kick frame's length: the Ethernet minimum without FCS.
const kickLen = 60

// tcActShot and tcxNext are a tc program's verdicts: drop, and let the
// next program (or, classic, filter) decide.
const (
	tcActShot = 2
	tcxNext   = -1
)

// skbProtocolOff is offsetof(struct __sk_buff, protocol) (uapi bpf.h:
// len, pkt_type, mark, queue_mapping, protocol).
const skbProtocolOff = 16

// A kicker sends one kick frame through a port's qdisc: an enqueue,
// which makes the qdisc dequeue (a resumed TBF whose watchdog is far
// ahead otherwise waits for the next packet).
type kicker struct {
	port  Port
	fd    int
	addr  unix.SockaddrLinklayer
	raw   unix.RawSockaddrLinklayer // addr as the kernel reads it (rawSendto)
	frame []byte
	// drop is the program on the peer's tc ingress that drops kick
	// frames (so that they count as no interface's drop), and its link.
	drop     *ebpf.Program
	dropLink link.Link
}

func openKicker(p Port, l netlink.Link) (_ *kicker, err error) {
	k := &kicker{port: p, fd: -1}
	defer func() {
		if err != nil {
			k.close()
		}
	}()
	if err := k.addPeerFilter(); err != nil {
		return nil, err
	}
	proto := htons(KickEthertype)
	err = nsexec.Do(p.Netns, func() error {
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(proto))
		if err != nil {
			return err
		}
		k.fd = fd
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pfc port %s/%s: kick socket: %w", p.Netns, p.Iface, err)
	}
	k.addr = unix.SockaddrLinklayer{Protocol: proto, Ifindex: l.Attrs().Index, Halen: 6}
	copy(k.addr.Addr[:], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	k.raw = unix.RawSockaddrLinklayer{Family: unix.AF_PACKET, Protocol: proto, Ifindex: int32(l.Attrs().Index), Halen: 6}
	copy(k.raw.Addr[:], k.addr.Addr[:6])
	k.frame = make([]byte, kickLen)
	copy(k.frame[0:6], k.addr.Addr[:6])
	copy(k.frame[6:12], l.Attrs().HardwareAddr)
	binary.BigEndian.PutUint16(k.frame[12:], KickEthertype)
	return k, nil
}

// send sends one kick frame on the port, through its qdisc.
func (k *kicker) send() error {
	if err := rawSendto(k.fd, k.frame, &k.raw); err != nil {
		return fmt.Errorf("pfc port %s/%s: kick: %w", k.port.Netns, k.port.Iface, err)
	}
	return nil
}

// addPeerFilter attaches, with tcx, a program to the peer's ingress that
// drops kick frames and passes every other packet on. The kernel here
// has neither matchall nor gact, so it is a few BPF instructions:
// skb->protocol (network order) against the kick's EtherType.
func (k *kicker) addPeerFilter() error {
	p := k.port
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name: "cclab_pfc_kick", Type: ebpf.SchedCLS, License: "GPL",
		Instructions: asm.Instructions{
			asm.LoadMem(asm.R2, asm.R1, skbProtocolOff, asm.Word),
			asm.Mov.Imm(asm.R0, tcxNext),
			asm.JNE.Imm(asm.R2, int32(htons(KickEthertype)), "out"),
			asm.Mov.Imm(asm.R0, tcActShot),
			asm.Return().WithSymbol("out"),
		},
	})
	if err != nil {
		return fmt.Errorf("pfc peer %s/%s: kick drop program: %w", p.PeerNetns, p.PeerIface, err)
	}
	k.drop = prog
	return nsexec.Do(p.PeerNetns, func() error {
		ifc, err := net.InterfaceByName(p.PeerIface)
		if err != nil {
			return fmt.Errorf("pfc peer %s/%s: %w", p.PeerNetns, p.PeerIface, err)
		}
		l, err := link.AttachTCX(link.TCXOptions{Interface: ifc.Index, Program: prog, Attach: ebpf.AttachTCXIngress, Anchor: link.Head()})
		if err != nil {
			return fmt.Errorf("pfc peer %s/%s: attach kick drop: %w", p.PeerNetns, p.PeerIface, err)
		}
		k.dropLink = l
		return nil
	})
}

func (k *kicker) close() error {
	var errs []error
	if k.fd >= 0 {
		errs = append(errs, unix.Close(k.fd))
		k.fd = -1
	}
	if k.dropLink != nil {
		if err := k.dropLink.Close(); err != nil {
			errs = append(errs, fmt.Errorf("pfc peer %s/%s: detach kick drop: %w", k.port.PeerNetns, k.port.PeerIface, err))
		}
		k.dropLink = nil
	}
	if k.drop != nil {
		errs = append(errs, k.drop.Close())
		k.drop = nil
	}
	return errors.Join(errs...)
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }
