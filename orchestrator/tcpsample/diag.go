package tcpsample

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"time"

	"golang.org/x/sys/unix"
)

// The parts of include/uapi/linux/inet_diag.h and netlink.h a dump needs
// (x/sys has the constants of netlink but not of inet_diag).
//
// The request is inet_diag's original one, TCPDIAG_GETSOCK with struct
// inet_diag_req, which the kernel still serves and answers for both
// address families at once; SOCK_DIAG_BY_FAMILY takes one family per
// request. Each dump walks the whole TCP established hash table, which
// namespaces share unless made with their own, and that walk is nearly all
// a sample costs: one walk per host, not two.
const (
	tcpDiagGetSock  = 18 // TCPDIAG_GETSOCK
	sizeofNlMsghdr  = 16
	sizeofDiagReq   = 60 // struct inet_diag_req
	sizeofDiagMsg   = 72 // struct inet_diag_msg
	inetDiagInfo    = 2  // INET_DIAG_INFO: struct tcp_info
	inetDiagCong    = 4  // INET_DIAG_CONG: the congestion control's name
	extensions      = 1<<(inetDiagInfo-1) | 1<<(inetDiagCong-1)
	nlaTypeMask     = ^uint16(unix.NLA_F_NESTED | unix.NLA_F_NET_BYTEORDER)
	diagRecvTimeout = time.Second
	// A dump's reply comes in datagrams of at most 32 KiB (the kernel's
	// cap on a dump's skb); a larger buffer never truncates one.
	diagBufSize = 64 << 10
)

// diagSocket is a NETLINK_SOCK_DIAG socket made inside one namespace: its
// dumps list that namespace's sockets, whichever thread asks.
type diagSocket struct {
	fd    int
	seq   uint32
	req   [sizeofNlMsghdr + sizeofDiagReq]byte
	buf   []byte
	names map[string]string // congestion control names seen, so a sample does not allocate one per flow
}

// newDiagSocket makes the socket in the calling thread's namespace.
func newDiagSocket() (*diagSocket, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, fmt.Errorf("sock_diag socket: %w", err)
	}
	// A dump answers at once; the timeout only keeps a wedged reply from
	// hanging the caller.
	tv := unix.NsecToTimeval(diagRecvTimeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("sock_diag socket: receive timeout: %w", err)
	}
	return &diagSocket{fd: fd, buf: make([]byte, diagBufSize), names: map[string]string{}}, nil
}

func (d *diagSocket) close() error {
	if d.fd < 0 {
		return nil
	}
	err := unix.Close(d.fd)
	d.fd = -1
	return err
}

// dump appends to out one Flow per TCP socket (IPv4 and IPv6) in a sampled
// state, with Host, Mono and Wall left to the caller.
func (d *diagSocket) dump(out []Flow) ([]Flow, error) {
	d.seq++
	ne := binary.NativeEndian
	r := d.req[:]
	clear(r)
	ne.PutUint32(r[0:], uint32(len(r)))
	ne.PutUint16(r[4:], tcpDiagGetSock)
	ne.PutUint16(r[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	ne.PutUint32(r[8:], d.seq)
	q := r[sizeofNlMsghdr:] // inet_diag_req; a zero socket id matches every socket
	q[0] = unix.AF_INET     // ignored by a dump, which lists both families
	q[3] = extensions
	ne.PutUint32(q[52:], sampledStates)
	if err := unix.Sendto(d.fd, r, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return out, fmt.Errorf("sock_diag request: %w", err)
	}
	for {
		n, _, err := unix.Recvfrom(d.fd, d.buf, unix.MSG_TRUNC)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("sock_diag reply: %w", err)
		}
		if n > len(d.buf) {
			return out, fmt.Errorf("sock_diag reply: %d-byte datagram truncated to %d", n, len(d.buf))
		}
		var done bool
		out, done, err = d.parseDatagram(d.buf[:n], out)
		if err != nil || done {
			return out, err
		}
	}
}

// parseDatagram reads the netlink messages of one datagram; done is true
// at the dump's end.
func (d *diagSocket) parseDatagram(b []byte, out []Flow) (_ []Flow, done bool, _ error) {
	ne := binary.NativeEndian
	for len(b) >= sizeofNlMsghdr {
		l := ne.Uint32(b[0:])
		if l < sizeofNlMsghdr || uint64(l) > uint64(len(b)) {
			return out, false, fmt.Errorf("sock_diag reply: message of %d bytes in %d", l, len(b))
		}
		typ, seq, msg := ne.Uint16(b[4:]), ne.Uint32(b[8:]), b[sizeofNlMsghdr:l]
		b = b[min(int(l+3)&^3, len(b)):]
		if seq != d.seq {
			continue // the rest of an earlier dump that failed half-way
		}
		switch typ {
		case unix.NLMSG_DONE, unix.NLMSG_ERROR:
			// Both carry an int: 0 at a dump's normal end, else -errno.
			if len(msg) >= 4 {
				if e := int32(ne.Uint32(msg)); e < 0 {
					return out, true, fmt.Errorf("sock_diag dump: %w", unix.Errno(-e))
				}
			}
			return out, true, nil
		case tcpDiagGetSock:
			f, err := d.parseSocket(msg)
			if err != nil {
				return out, false, err
			}
			// No tcp_info: a minisock (an orphaned FIN-WAIT-2 the kernel
			// keeps as a time-wait socket), which moves no data.
			if f.Have != 0 {
				out = append(out, f)
			}
		}
	}
	return out, false, nil
}

// parseSocket reads one struct inet_diag_msg and its attributes.
func (d *diagSocket) parseSocket(m []byte) (Flow, error) {
	if len(m) < sizeofDiagMsg {
		return Flow{}, fmt.Errorf("sock_diag reply: socket message of %d bytes, want %d", len(m), sizeofDiagMsg)
	}
	f := Flow{
		State:  State(m[1]),
		Local:  netip.AddrPortFrom(diagAddr(m[0], m[8:24]), binary.BigEndian.Uint16(m[4:])),
		Remote: netip.AddrPortFrom(diagAddr(m[0], m[24:40]), binary.BigEndian.Uint16(m[6:])),
	}
	a := m[sizeofDiagMsg:]
	for len(a) >= 4 {
		l := binary.NativeEndian.Uint16(a[0:])
		if l < 4 || int(l) > len(a) {
			return Flow{}, fmt.Errorf("sock_diag reply: attribute of %d bytes in %d", l, len(a))
		}
		v := a[4:l]
		switch binary.NativeEndian.Uint16(a[2:]) & nlaTypeMask {
		case inetDiagInfo:
			readTCPInfo(v, &f)
		case inetDiagCong:
			f.CC = d.name(v)
		}
		a = a[min(int(l+3)&^3, len(a)):]
	}
	return f, nil
}

// diagAddr is an inet_diag address: the first 4 of its 16 bytes for IPv4;
// an IPv4-mapped IPv6 address (a dual-stack socket's IPv4 peer) as IPv4.
func diagAddr(family uint8, b []byte) netip.Addr {
	if family == unix.AF_INET {
		return netip.AddrFrom4([4]byte(b[:4]))
	}
	return netip.AddrFrom16([16]byte(b[:16])).Unmap()
}

// name is a NUL-terminated attribute string, shared with earlier samples.
func (d *diagSocket) name(b []byte) string {
	for i, c := range b {
		if c == 0 {
			b = b[:i]
			break
		}
	}
	if s, ok := d.names[string(b)]; ok {
		return s
	}
	s := string(b)
	d.names[s] = s
	return s
}
