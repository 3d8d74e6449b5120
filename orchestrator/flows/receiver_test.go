package flows

import (
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A receiver runs an ECN law when any in-process flow to it uses one (the
// first by name when several do), and the namespace's default otherwise.
func TestReceiverCC(t *testing.T) {
	specs := []Spec{
		{Src: "a", Dst: "b", CC: "dcqcn"}, {Src: "c", Dst: "b", CC: "dcqcn"},
		{Src: "a", Dst: "c", CC: "cubic"}, {Src: "b", Dst: "c", CC: "dcqcn"},
		{Src: "a", Dst: "d", CC: "cubic"}, {Src: "b", Dst: "d", CC: ""},
		{Src: "a", Dst: "e", CC: "dctcp"}, {Src: "b", Dst: "e", CC: "dcqcn"}, {Src: "c", Dst: "e", CC: "reno"},
		{Src: "a", Dst: "g", CC: "reno"}, {Src: "b", Dst: "g", CC: "dcqcn", Tool: Iperf3},
	}
	echo := map[string]bool{"dcqcn": true, "dctcp": true}
	for dst, want := range map[string]string{"b": "dcqcn", "c": "dcqcn", "d": "", "e": "dcqcn", "f": "", "g": ""} {
		if got := receiverCC(specs, dst, echo); got != want {
			t.Errorf("receiver %s runs %q, want %q", dst, got, want)
		}
	}
}

// ListenCC's accepted sockets run the listener's congestion control.
func TestListenCCAccepted(t *testing.T) {
	a, b := pair(t)
	ln, err := ListenCC(b.Netns, b.Addr, 5202, "reno")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		c, err := ln.AcceptTCP()
		if err != nil {
			got <- "accept: " + err.Error()
			return
		}
		defer c.Close()
		raw, _ := c.SyscallConn()
		var cc string
		raw.Control(func(fd uintptr) { cc, _ = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION) })
		got <- cc
	}()
	s, err := newClientSocket(a.Netns, a.Addr, "cubic", 0)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := s.connect(netip.AddrPortFrom(b.Addr, 5202), time.Now().Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	select {
	case cc := <-got:
		if cc != "reno" {
			t.Fatalf("accepted socket runs %q, want reno", cc)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no connection accepted")
	}
}
