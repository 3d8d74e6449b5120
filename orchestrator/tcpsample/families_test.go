package tcpsample

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"cclab/internal/nsexec"
	"cclab/internal/testnet"
)

// listenAccept listens on addr in ns (network "tcp" makes Go's dual-stack
// IPv6 socket) and keeps the first connection it accepts until the test ends.
func listenAccept(t *testing.T, ns, network, addr string) net.Addr {
	t.Helper()
	var ln net.Listener
	if err := nsexec.Do(ns, func() (err error) {
		ln, err = net.Listen(network, addr)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	t.Cleanup(func() {
		ln.Close()
		if c := <-accepted; c != nil {
			c.Close()
		}
	})
	return ln.Addr()
}

func dial(t *testing.T, ns, network, addr string) net.Conn {
	t.Helper()
	var c net.Conn
	if err := nsexec.Do(ns, func() (err error) {
		c, err = net.Dial(network, addr)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// IPv6 sockets are sampled with IPv4's in the same dump: a dual-stack
// listener's IPv4 connection (an AF_INET6 socket with mapped addresses,
// reported as IPv4) and a connection over IPv6 loopback.
func TestBothFamilies(t *testing.T) {
	a, b := testnet.Pair(t)
	listenAccept(t, b.Netns, "tcp", ":7010")
	v4 := dial(t, a.Netns, "tcp4", netip.AddrPortFrom(b.Addr, 7010).String())
	ln6 := listenAccept(t, a.Netns, "tcp6", "[::1]:0")
	v6 := dial(t, a.Netns, "tcp6", ln6.String())

	var got []Flow
	var err error
	for range 50 { // the accepts run concurrently; wait for both ends
		if got, err = Sample(context.Background(), hostsOf(a, b)); err != nil {
			t.Fatal(err)
		}
		if len(got) == 4 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	var ends []string
	for _, f := range got {
		ends = append(ends, f.Host+" "+f.Local.String()+" "+f.Remote.String())
	}
	slices.Sort(ends)
	want := []string{
		"a " + addrPort(v4.LocalAddr()).String() + " " + addrPort(v4.RemoteAddr()).String(),
		"a " + addrPort(v6.LocalAddr()).String() + " " + addrPort(v6.RemoteAddr()).String(),
		"a " + addrPort(v6.RemoteAddr()).String() + " " + addrPort(v6.LocalAddr()).String(),
		"b " + addrPort(v4.RemoteAddr()).String() + " " + addrPort(v4.LocalAddr()).String(),
	}
	slices.Sort(want)
	if !slices.Equal(ends, want) {
		t.Fatalf("flows\n%v\nwant\n%v", ends, want)
	}
}
