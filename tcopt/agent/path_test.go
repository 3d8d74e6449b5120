package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"cclab/internal/nsexec"
	"cclab/internal/runid"
)

// path is two namespaces joined by a veth: snd (10.77.0.1, dev s0) and
// rcv (10.77.0.2, dev r0).
type path struct {
	snd, rcv string
	sndIP    netip.Addr
	rcvIP    netip.Addr
}

type pathConfig struct {
	gso        bool // GSO on; checksums in software, so no TSO
	tso        bool // TSO and checksum offload on: skbs cross the veth whole
	timestamps bool // net.ipv4.tcp_timestamps in both namespaces
}

func run(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func newPath(t *testing.T, id runid.ID, cfg pathConfig) *path {
	t.Helper()
	p := &path{snd: id.Netns("snd"), rcv: id.Netns("rcv"),
		sndIP: netip.MustParseAddr("10.77.0.1"), rcvIP: netip.MustParseAddr("10.77.0.2")}
	for _, ns := range []string{p.snd, p.rcv} {
		run(t, "ip", "netns", "add", ns)
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	}
	run(t, "ip", "-n", p.snd, "link", "add", "s0", "type", "veth", "peer", "name", "r0", "netns", p.rcv)
	onoff := map[bool]string{true: "on", false: "off"}
	tsv := map[bool]string{true: "1", false: "0"}
	for _, x := range []struct{ ns, dev, addr string }{{p.snd, "s0", "10.77.0.1/24"}, {p.rcv, "r0", "10.77.0.2/24"}} {
		run(t, "ip", "-n", x.ns, "addr", "add", x.addr, "dev", x.dev)
		run(t, "ip", "-n", x.ns, "link", "set", x.dev, "up")
		run(t, "ip", "-n", x.ns, "link", "set", "lo", "up")
		run(t, "ip", "netns", "exec", x.ns, "sysctl", "-qw", "net.ipv4.tcp_timestamps="+tsv[cfg.timestamps])
		// A checksum the kernel leaves to the device would cross the veth
		// unverified: compute it in software so a broken one shows. TSO
		// needs checksum offload, so it is only on with it.
		run(t, "ip", "netns", "exec", x.ns, "ethtool", "-K", x.dev, "tx", onoff[cfg.tso],
			"tso", onoff[cfg.tso], "gso", onoff[cfg.gso || cfg.tso], "gro", "off")
	}
	return p
}

// listen opens a TCP listener in ns.
func listen(t *testing.T, ns string, addr netip.Addr, port int) *net.TCPListener {
	t.Helper()
	var ln *net.TCPListener
	err := nsexec.Do(ns, func() error {
		var err error
		ln, err = net.ListenTCP("tcp4", &net.TCPAddr{IP: addr.AsSlice(), Port: port})
		return err
	})
	if err != nil {
		t.Fatalf("listen in %s: %v", ns, err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// dial connects from ns.
func dial(t *testing.T, ns string, to netip.Addr, port int) *net.TCPConn {
	t.Helper()
	var c *net.TCPConn
	err := nsexec.Do(ns, func() error {
		var err error
		c, err = net.DialTCP("tcp4", nil, &net.TCPAddr{IP: to.AsSlice(), Port: port})
		return err
	})
	if err != nil {
		t.Fatalf("dial from %s: %v", ns, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// sinkOne accepts one connection and reads it to the end; the result is the
// byte count.
func sinkOne(ln *net.TCPListener) <-chan result {
	ch := make(chan result, 1)
	go func() {
		c, err := ln.AcceptTCP()
		if err != nil {
			ch <- result{err: err}
			return
		}
		defer c.Close()
		n, err := io.Copy(io.Discard, c)
		ch <- result{n: n, err: err}
	}()
	return ch
}

type result struct {
	n   int64
	err error
}

// send writes size bytes and waits until the sink has read them all;
// it returns the time taken.
func send(ctx context.Context, c *net.TCPConn, size int, sink <-chan result) (time.Duration, error) {
	buf := make([]byte, 256<<10)
	start := time.Now()
	if dl, ok := ctx.Deadline(); ok {
		c.SetWriteDeadline(dl)
	}
	for left := size; left > 0; {
		n := min(left, len(buf))
		if _, err := c.Write(buf[:n]); err != nil {
			return 0, fmt.Errorf("write after %d bytes: %w", size-left, err)
		}
		left -= n
	}
	if err := c.CloseWrite(); err != nil {
		return 0, fmt.Errorf("close write: %w", err)
	}
	select {
	case r := <-sink:
		if r.err != nil {
			return 0, fmt.Errorf("sink: %w", r.err)
		}
		if r.n != int64(size) {
			return 0, fmt.Errorf("sink read %d bytes of %d", r.n, size)
		}
	case <-ctx.Done():
		return 0, errors.New("transfer stalled: " + ctx.Err().Error())
	}
	return time.Since(start), nil
}

// fdOf is the file descriptor of a TCP connection in this process.
func fdOf(t *testing.T, c *net.TCPConn) int {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fd int
	if err := rc.Control(func(f uintptr) { fd = int(f) }); err != nil {
		t.Fatal(err)
	}
	return fd
}
