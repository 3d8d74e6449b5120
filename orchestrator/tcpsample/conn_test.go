package tcpsample

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"cclab/internal/nsexec"
	"cclab/internal/testnet"
	"cclab/orchestrator/flows"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// conn is one real TCP connection between two test namespaces.
type conn struct {
	sender, receiver *net.TCPConn
	received         atomic.Int64 // bytes drain has read
	wg               sync.WaitGroup
}

// connect opens a connection from a to b:port, the sender running
// senderCC paced at pacing bytes/s (0: unpaced), the receiver receiverCC.
// It is closed when the test ends.
//
// A handshake that lost a packet (a SYN dropped in a full CPU backlog,
// which other tests' traffic fills on a shared machine) starts the
// connection with a smoothed RTT of a second, and a paced flow's pacing
// rate from it: such a connection is reset and made again, twice at most.
func connect(t testing.TB, a, b testnet.End, port uint16, senderCC, receiverCC string, pacing uint64) *conn {
	t.Helper()
	ln, err := flows.ListenCC(b.Netns, b.Addr, port, receiverCC)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	d := net.Dialer{
		Timeout:   5 * time.Second,
		LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(a.Addr, 0)),
		Control: func(_, _ string, rc syscall.RawConn) error {
			var serr error
			if err := rc.Control(func(fd uintptr) {
				serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, senderCC)
				if serr == nil && pacing > 0 {
					serr = unix.SetsockoptUint64(int(fd), unix.SOL_SOCKET, unix.SO_MAX_PACING_RATE, pacing)
				}
			}); err != nil {
				return err
			}
			return serr
		},
	}
	for try := 1; ; try++ {
		c := dialAccept(t, ln, a.Netns, &d, netip.AddrPortFrom(b.Addr, port))
		rtt := tcpInfo(t, c.sender).Rtt
		if rtt < 200_000 || try == 3 {
			t.Cleanup(func() {
				c.sender.Close()
				c.receiver.Close()
				c.wg.Wait()
			})
			return c
		}
		t.Logf("connection to %s:%d, try %d: handshake RTT %d us, made again", b.Addr, port, try, rtt)
		c.reset()
	}
}

// reset aborts the connection (RST): nothing is left in LAST-ACK or
// TIME-WAIT for a later sample to see.
func (c *conn) reset() {
	c.sender.SetLinger(0)
	c.sender.Close()
	c.receiver.Close()
	c.wg.Wait()
}

// dialAccept dials dst from namespace ns and accepts the connection on ln.
func dialAccept(t testing.TB, ln *net.TCPListener, ns string, d *net.Dialer, dst netip.AddrPort) *conn {
	t.Helper()
	accepted := make(chan *net.TCPConn, 1)
	go func() {
		ln.SetDeadline(time.Now().Add(10 * time.Second))
		c, _ := ln.AcceptTCP()
		accepted <- c
	}()
	c := &conn{}
	var sc net.Conn
	if err := nsexec.Do(ns, func() (err error) {
		sc, err = d.Dial("tcp4", dst.String())
		return err
	}); err != nil {
		t.Fatalf("dial %s: %v", dst, err)
	}
	c.sender = sc.(*net.TCPConn)
	if c.receiver = <-accepted; c.receiver == nil {
		c.sender.Close()
		t.Fatalf("accept on %s failed", dst)
	}
	return c
}

// shape makes e's egress a bottleneck: a token bucket at rate bytes/s with
// a queue of limit bytes.
func shape(t testing.TB, e testnet.End, rate uint64, limit uint32) {
	t.Helper()
	ns, err := netns.GetFromName(e.Netns)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	l, err := h.LinkByName(e.Iface)
	if err != nil {
		t.Fatal(err)
	}
	const burst = 80_000 // holds a 64 KB GSO packet whole
	tbf := &netlink.Tbf{
		QdiscAttrs: netlink.QdiscAttrs{LinkIndex: l.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT},
		Rate:       rate, Limit: limit, Buffer: netlink.Xmittime(rate, burst),
	}
	if err := h.QdiscAdd(tbf); err != nil {
		t.Fatalf("tbf on %s in %s: %v", e.Iface, e.Netns, err)
	}
}

// pump has the sender write as fast as the connection takes it until it
// is closed.
func (c *conn) pump() {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		buf := make([]byte, 64<<10)
		for {
			if _, err := c.sender.Write(buf); err != nil {
				return
			}
		}
	}()
}

// drain has the receiver read and count everything until EOF or close.
func (c *conn) drain() {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		buf := make([]byte, 256<<10)
		for {
			n, err := c.receiver.Read(buf)
			c.received.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
}

// tcpInfo is the socket's tcp_info through getsockopt, the interface the
// sampler does not use.
func tcpInfo(t testing.TB, c *net.TCPConn) *unix.TCPInfo {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var info *unix.TCPInfo
	var serr error
	if err := rc.Control(func(fd uintptr) { info, serr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) }); err != nil {
		t.Fatal(err)
	}
	if serr != nil {
		t.Fatal(serr)
	}
	return info
}

// addrPort is a connection end as the sampler reports it.
func addrPort(a net.Addr) netip.AddrPort {
	ap := a.(*net.TCPAddr).AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}
