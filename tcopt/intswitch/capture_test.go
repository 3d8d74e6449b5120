package intswitch

// Capturing what a receiver's TCP stack is handed. An AF_PACKET socket on
// the receiver's own interface sees a packet before tc ingress, i.e. before
// the last switch port's dequeue hook stamps it, so the tests mirror the
// receiver's ingress traffic (a classic tc filter, which runs after the tcx
// programs) through a veth pair into a capture namespace and read it there.

import (
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"cclab/internal/nsexec"
)

type capture struct {
	fd     int
	quit   atomic.Bool
	mu     sync.Mutex
	frames [][]byte
	done   chan struct{}
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// mirrorCapture starts capturing every frame arriving on node/iface after
// its tc ingress programs have run.
func (n *testNet) mirrorCapture(node, iface string) *capture {
	n.t.Helper()
	capNode := "cap" + node
	n.addNode(capNode, false)
	n.sh("ip", "link", "add", "mir0", "netns", n.ns(node), "type", "veth", "peer", "name", "mir1", "netns", n.ns(capNode))
	n.sh("ip", "-n", n.ns(node), "link", "set", "mir0", "up")
	n.sh("ip", "-n", n.ns(capNode), "link", "set", "mir1", "up")
	n.sh("tc", "-n", n.ns(node), "qdisc", "add", "dev", iface, "clsact")
	n.sh("tc", "-n", n.ns(node), "filter", "add", "dev", iface, "ingress", "protocol", "all",
		"u32", "match", "u32", "0", "0", "action", "mirred", "egress", "mirror", "dev", "mir0")

	c := &capture{done: make(chan struct{})}
	err := nsexec.Do(n.ns(capNode), func() error {
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
		if err != nil {
			return err
		}
		ifc, err := net.InterfaceByName("mir1")
		if err != nil {
			unix.Close(fd)
			return err
		}
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 64<<20)
		if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifc.Index}); err != nil {
			unix.Close(fd)
			return err
		}
		c.fd = fd
		return nil
	})
	if err != nil {
		n.t.Fatalf("capture on %s/%s: %v", node, iface, err)
	}
	tv := unix.NsecToTimeval(int64(50 * time.Millisecond))
	_ = unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	go c.loop()
	n.t.Cleanup(func() { c.stop() })
	return c
}

func (c *capture) loop() {
	defer close(c.done)
	buf := make([]byte, 65536)
	for !c.quit.Load() {
		k, _, err := unix.Recvfrom(c.fd, buf, 0)
		if err == unix.EAGAIN || err == unix.EINTR {
			continue
		}
		if err != nil {
			return
		}
		f := append([]byte(nil), buf[:k]...)
		c.mu.Lock()
		c.frames = append(c.frames, f)
		c.mu.Unlock()
	}
}

func (c *capture) stop() {
	if c.quit.Swap(true) {
		return
	}
	<-c.done
	unix.Close(c.fd)
}

// snapshot returns the frames captured so far.
func (c *capture) snapshot() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.frames...)
}

// waitFor polls until pred holds for the captured frames and the capture
// has gone quiet (no new frame for 100 ms: the reader may lag behind the
// traffic, and callers look at the last frames), or until the timeout.
func (c *capture) waitFor(timeout time.Duration, pred func([][]byte) bool) [][]byte {
	const quiet = 100 * time.Millisecond
	end := time.Now().Add(timeout)
	count, since := -1, time.Now()
	for {
		f := c.snapshot()
		if len(f) != count {
			count, since = len(f), time.Now()
		}
		if (pred(f) && time.Since(since) >= quiet) || time.Now().After(end) {
			return f
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A tcpFrame is an IPv4 TCP frame's parsed headers.
type tcpFrame struct {
	raw      []byte
	ipOff    int
	tcpOff   int
	tcpHLen  int
	src, dst net.IP
	sport    uint16
	dport    uint16
	payload  int
	tos      byte
}

func parseTCP(f []byte) (tcpFrame, bool) {
	if len(f) < 14+20 || binary.BigEndian.Uint16(f[12:]) != 0x0800 {
		return tcpFrame{}, false
	}
	ip := f[14:]
	ihl := int(ip[0]&0x0f) * 4
	if ip[0]>>4 != 4 || ihl < 20 || len(ip) < ihl+20 || ip[9] != 6 {
		return tcpFrame{}, false
	}
	tot := int(binary.BigEndian.Uint16(ip[2:]))
	tcp := ip[ihl:]
	hl := int(tcp[12]>>4) * 4
	if hl < 20 || len(tcp) < hl || tot > len(ip) {
		return tcpFrame{}, false
	}
	return tcpFrame{raw: f, ipOff: 14, tcpOff: 14 + ihl, tcpHLen: hl,
		src: net.IP(ip[12:16]), dst: net.IP(ip[16:20]),
		sport: binary.BigEndian.Uint16(tcp[0:]), dport: binary.BigEndian.Uint16(tcp[2:]),
		payload: tot - ihl - hl, tos: ip[1]}, true
}

// options returns the TCP option area.
func (t tcpFrame) options() []byte { return t.raw[t.tcpOff+20 : t.tcpOff+t.tcpHLen] }

// csum16 is the Internet checksum of b with an initial sum.
func csum16(sum uint32, b []byte) uint32 {
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	return sum
}

func fold(sum uint32) uint16 {
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return uint16(sum)
}

// checksumsOK verifies the IPv4 header and TCP checksums of the frame.
func (t tcpFrame) checksumsOK() bool {
	ip := t.raw[t.ipOff:]
	ihl := int(ip[0]&0x0f) * 4
	if fold(csum16(0, ip[:ihl])) != 0xffff {
		return false
	}
	tot := int(binary.BigEndian.Uint16(ip[2:]))
	seg := ip[ihl:tot]
	ps := csum16(0, ip[12:20]) + 6 + uint32(len(seg))
	return fold(csum16(ps, seg)) == 0xffff
}
