package agent

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"testing"
	"time"

	"cclab/internal/nsexec"
	"cclab/internal/units"
	"cclab/tcopt"
	"cclab/tcopt/internal/pkt"
	"cclab/tcopt/intswitch"
)

// TestThreeSwitchEcho: snd - s1 - s2 - s3 - rcv with the INT switch on the
// three forward ports (1, 10 and 25 Gbit/s): the receiver's TCP gets data
// packets with 3 records in path order, its ACKs echo them, and the
// sender's socket storage holds the 3 hops in the same order, with dequeue
// times that grow along the path.
func TestThreeSwitchEcho(t *testing.T) {
	a, id := attach(t)
	nodes := []string{"snd", "s1", "s2", "s3", "rcv"}
	rates := []uint32{1000, 10000, 25000}
	for i, n := range nodes {
		ns := id.Netns(n)
		run(t, "ip", "netns", "add", ns)
		t.Cleanup(func() { run(t, "ip", "netns", "del", ns) })
		fwd := "0"
		if i > 0 && i < len(nodes)-1 {
			fwd = "1"
		}
		run(t, "ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.ip_forward="+fwd, "net.ipv4.tcp_timestamps=0")
		run(t, "ip", "-n", ns, "link", "set", "lo", "up")
	}
	// Link j joins node j (10.78.j.1, dev r<j>) to node j+1 (10.78.j.2, dev l<j>).
	var ports []intswitch.PortConfig
	for j := 0; j < len(nodes)-1; j++ {
		a, b := id.Netns(nodes[j]), id.Netns(nodes[j+1])
		r, l := fmt.Sprintf("r%d", j), fmt.Sprintf("l%d", j)
		run(t, "ip", "link", "add", r, "netns", a, "type", "veth", "peer", "name", l, "netns", b)
		for _, e := range []struct{ ns, dev, addr string }{{a, r, fmt.Sprintf("10.78.%d.1/24", j)}, {b, l, fmt.Sprintf("10.78.%d.2/24", j)}} {
			run(t, "ip", "netns", "exec", e.ns, "ethtool", "-K", e.dev, "tx", "off", "tso", "off", "gso", "off", "gro", "off")
			run(t, "ip", "-n", e.ns, "addr", "add", e.addr, "dev", e.dev)
			run(t, "ip", "-n", e.ns, "link", "set", e.dev, "up")
		}
		if j > 0 {
			ports = append(ports, intswitch.PortConfig{Node: nodes[j], Iface: r, PeerNode: nodes[j+1], PeerIface: l,
				Rate: units.Rate(uint64(rates[j-1]) * 1e6)})
		}
	}
	for k := range nodes {
		for j := 0; j < len(nodes)-1; j++ {
			switch {
			case j < k-1:
				run(t, "ip", "-n", id.Netns(nodes[k]), "route", "add", fmt.Sprintf("10.78.%d.0/24", j), "via", fmt.Sprintf("10.78.%d.1", k-1))
			case j > k:
				run(t, "ip", "-n", id.Netns(nodes[k]), "route", "add", fmt.Sprintf("10.78.%d.0/24", j), "via", fmt.Sprintf("10.78.%d.2", k))
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sw, err := intswitch.Attach(ctx, intswitch.Config{Netns: id.Netns, Ports: ports})
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Close()

	if err := a.AddProcess(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	rcvIP := netip.MustParseAddr("10.78.3.2")
	var capt *pkt.Capture
	if err := nsexec.Do(id.Netns("rcv"), func() (err error) { capt, err = pkt.Listen("l3", 256); return }); err != nil {
		t.Fatal(err)
	}
	defer capt.Close()
	ln := listen(t, id.Netns("rcv"), rcvIP, 5030)
	c := dial(t, id.Netns("snd"), rcvIP, 5030)
	srv, err := ln.AcceptTCP()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srvFd := fdOf(t, srv)
	sink := make(chan result, 1)
	go func() {
		n, err := io.Copy(io.Discard, srv)
		sink <- result{n, err}
	}()
	if _, err := send(ctx, c, 2<<20, sink); err != nil {
		t.Fatal(err)
	}

	// A record's time is when its port's link finishes the packet, which
	// runs ahead of the dequeue when the qdisc releases a burst: the next
	// hop may stamp earlier by up to that lead (intswitch.PortStats).
	ps, err := sw.Stats()
	if err != nil {
		t.Fatal(err)
	}
	var lead uint32
	for _, p := range ps {
		lead = max(lead, uint32(p.ClockLeadMax))
	}
	checkHops := func(what string, hs []tcopt.Hop) {
		t.Helper()
		if len(hs) != 3 {
			t.Fatalf("%s: %d hops %+v, want 3", what, len(hs), hs)
		}
		for i, h := range hs {
			if h.RateMbps != rates[i] {
				t.Fatalf("%s: hop %d rate %d, want %d (path order)", what, i, h.RateMbps, rates[i])
			}
			// The hop before stamped when its link finished the packet:
			// up to the clocks' lead and one skb (64 KB) at its rate after
			// this hop saw it.
			if i == 0 || tcopt.TSDelta(hs[i-1].TS, h.TS) <= lead+tcopt.TSUnit+uint32(66000*8000/rates[i-1]) {
				continue // later, or earlier within that
			}
			if tcopt.TSDelta(h.TS, hs[i-1].TS) > uint32(10*time.Millisecond) {
				t.Fatalf("%s: hop %d dequeued %d ns after hop %d (clock lead %d ns)", what, i, tcopt.TSDelta(h.TS, hs[i-1].TS), i-1, lead)
			}
		}
	}
	var e Echo
	err = capt.Wait(ctx, func([]pkt.Frame) bool {
		var ok bool
		e, ok, _ = a.Echo(fdOf(t, c))
		return ok && e.NHops == 3
	})
	if err != nil {
		t.Fatalf("sender storage %+v", e)
	}
	checkHops("sender storage", e.Hop[:e.NHops])
	if e.Flags != 0 {
		t.Fatalf("overflow on a 3-hop path: %+v", e)
	}
	capt.Close()

	// A capture on l3 sees packets before tc ingress, where s3 stamps its
	// record: check what the receiver's TCP saw (its agent's storage of
	// the newest forward option) and the echoes it sent.
	var fwd fwdStore
	if err := a.objs.CclabIntFwd.Lookup(int32(srvFd), &fwd); err != nil {
		t.Fatalf("receiver's forward option: %v", err)
	}
	o, err := tcopt.Parse(fwd.Opt[:fwd.Len])
	if err != nil || o.Echo || o.Slots != 5 {
		t.Fatalf("receiver's forward option %x: %+v %v", fwd.Opt[:fwd.Len], o, err)
	}
	checkHops("receiver's newest forward option", o.Hops())
	// Every echo carries all three records in path order, except one
	// truncated beside SACK blocks after a loss: then it keeps the first
	// records and sets the overflow flag (tcopt/README.md).
	echoes, truncated := 0, 0
	for _, f := range capt.Frames() {
		s, err := pkt.Parse(f.IP())
		if err != nil || len(s.Payload) != 0 || s.SPort != 5030 || s.Flags&(pkt.SYN|pkt.FIN) != 0 {
			continue
		}
		raw := tcopt.Find(s.Options)
		if raw == nil {
			continue // ACKs before the first data
		}
		o, err := tcopt.Parse(raw)
		if err != nil || !o.Echo {
			t.Fatalf("ACK %d: %+v %v", s.Ack, o, err)
		}
		hs := o.Hops()
		echoes++
		if o.Overflow && len(hs) < 3 {
			for i, h := range hs {
				if h.RateMbps != rates[i] {
					t.Fatalf("truncated echo on ACK %d: hop %d rate %d, want %d (path order)", s.Ack, i, h.RateMbps, rates[i])
				}
			}
			truncated++
			continue
		}
		checkHops(fmt.Sprintf("echo on ACK %d", s.Ack), hs)
	}
	st, _ := a.Stats()
	t.Logf("%d echoes, %d truncated beside SACK; agent %+v; last echo %+v", echoes, truncated, st, e)
	if echoes == 0 || st.Malformed != 0 || st.BadRecords != 0 || (truncated > 0 && st.EchoesTruncated == 0) {
		t.Fatalf("%d echoes (%d truncated), stats %+v", echoes, truncated, st)
	}
}
