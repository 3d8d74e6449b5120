package delay_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cclab/internal/nsexec"
	"cclab/internal/quiettest"
	"cclab/internal/runid"
	"cclab/orchestrator/delay"
	"cclab/orchestrator/flows"
	"cclab/orchestrator/health"
	"cclab/orchestrator/netbuild"
	"cclab/topology"
)

// The delay line's bars (issue 11, docs/performance.md): one-way delays of
// 50 us to 10 ms within a median error of 5 % + 10 us and a p99 of
// 15 % + 100 us while a line-rate flow crosses the same line; at least 95 %
// of a 1 Gbit/s link's goodput through it; no reordering and no loss but
// in the configured buffers.
//
// The star h0..h3 around s0 has 1 Gbit/s links of D/2 each, so every path
// carries D one way: under path placement all of it at the port of its
// last hop, under link placement D/2 at s0's port and D/2 at the
// receiving host (the probes are then timed where h2 transmits them: a
// tap on s0 sees them only after their first link's delay). Both
// placements run, link placement from 1 ms (linkPlacementLeast). A flow from h1
// to h0, paced at 95 % of the link, loads the line; UDP probes from h2 to
// h3 cross the same line (a port of their own, so no queue) and are timed
// by kernel receive stamps where they enter s0 and where they reach h3:
// the error is that time minus D. Then an unpaced flow h1 -> h0 measures
// goodput, against the same star without delay.
//
// CCLAB_DELAY_SWEEP=full runs every delay of the figure table.
func TestLineAccuracy(t *testing.T) {
	delays := []time.Duration{50 * time.Microsecond, time.Millisecond, 10 * time.Millisecond}
	if os.Getenv("CCLAB_DELAY_SWEEP") == "full" {
		delays = []time.Duration{50 * time.Microsecond, 200 * time.Microsecond, time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond}
	}
	base := goodput(t, 0, "")
	t.Logf("no delay: %.1f Mbit/s", base/1e6)
	for _, placement := range []string{topology.PlacePath, topology.PlaceLink} {
		for _, d := range delays {
			if placement == topology.PlaceLink && d < linkPlacementLeast {
				continue
			}
			t.Run(placement+"/"+d.String(), func(t *testing.T) {
				// Real timing on two shared cores: a bad moment (a
				// millisecond stall of the line's CPU, seen once in
				// eight full runs) gets two more chances; a bad line
				// passes none. Tries in which the hypervisor took CPU
				// time do not count.
				quiettest.Retry(t, quiettest.Policy{Failures: 3, Tries: 6}, func(int) error {
					_, err := measureAccuracy(t, d, base, placement)
					return err
				})
			})
		}
	}
}

// linkPlacementLeast is the least delay link placement is held to the
// bars at. Each link's pass re-enters the receiving interface through the
// packet CPU's backlog, behind the load: with the paced 1 Gbit/s flow the
// probes' error is 48-51 us at the median over two 25 us links (D 50 us,
// bar 12.5 us; the line's own lateness 11-13 us), 38-42 us at D 1 ms
// (docs/performance.md, "Link placement").
const linkPlacementLeast = time.Millisecond

// lineBars are the bars of a one-way delay d's error: its median within
// +-b50, its p99 at most b99.
func lineBars(d time.Duration) (b50, b99 time.Duration) {
	return d/20 + 10*time.Microsecond, d*15/100 + 100*time.Microsecond
}

type accuracy struct {
	median, p99 time.Duration // error of the probes' delay
	goodput     float64       // unpaced flow, bit/s
}

func starPlan(t *testing.T, d time.Duration) *topology.Plan {
	return starPlanAt(t, d, "")
}

// starPlanAt is the probe star with the delay held under placement ("" is
// the default, path).
func starPlanAt(t *testing.T, d time.Duration, placement string) *topology.Plan {
	t.Helper()
	delay := "0"
	if d > 0 {
		delay = strconv.FormatInt(int64(d/2/time.Nanosecond), 10) + "ns"
	}
	yml := fmt.Sprintf(`name: acc
kind: star
star: {senders: 3}
links:
  default: {rate: 1Gbit, buffer: 4MB, delay: %s}
`, delay)
	if placement != "" {
		yml += "delay: {placement: " + placement + "}\n"
	}
	p, err := topology.Parse("acc.yaml", []byte(yml))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// up builds the star with TCP buffers large enough for a 20 ms RTT at
// 1 Gbit/s, and starts its line (steered, as runs do).
func up(t *testing.T, d time.Duration) (*netbuild.Network, *delay.Server) {
	t.Helper()
	return upPlan(t, starPlan(t, d))
}

// upPlan builds p as up builds the star, and starts its line.
func upPlan(t *testing.T, p *topology.Plan) (*netbuild.Network, *delay.Server) {
	t.Helper()
	opt := netbuild.DefaultOptions()
	opt.DelayEngine = delay.EngineLine
	opt.Sysctls = map[string]string{
		"net.ipv4.tcp_rmem": "4096 131072 33554432",
		"net.ipv4.tcp_wmem": "4096 16384 33554432",
	}
	ctx := context.Background()
	n, err := netbuild.Up(ctx, runid.New(), p, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Down(context.Background()) })
	srv, err := n.ServeDelay(ctx, delay.ServeOptions{CPU: -1, Steer: n.Namespaces()})
	if err != nil {
		t.Fatal(err)
	}
	if srv != nil {
		t.Cleanup(func() { srv.Stop() })
	}
	return n, srv
}

func host(n *netbuild.Network, name string) flows.Host {
	nd, _ := n.Plan.Node(name)
	return flows.Host{Netns: n.Netns(name), Addr: nd.Addr}
}

// goodput runs an unpaced flow h1 -> h0 on the star with one-way delay d
// and returns its steady goodput in bit/s: what the receiver got between
// 1 s (slow start done, even at a 20 ms RTT) and 4 s.
func goodput(t *testing.T, d time.Duration, placement string) float64 {
	t.Helper()
	n, srv := upPlan(t, starPlanAt(t, d, placement))
	f, err := startPaced(host(n, "h1"), host(n, "h0"), 5302, 0)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	b0, t0 := f.received(), time.Now()
	time.Sleep(3 * time.Second)
	b1, t1 := f.received(), time.Now()
	f.stop()
	if srv != nil {
		if tot := srv.Stop().Totals(); tot.BufferDrops+tot.SendErrors > 0 {
			t.Fatalf("the line lost packets: %+v", tot)
		}
	}
	return float64(b1-b0) * 8 / t1.Sub(t0).Seconds()
}

func measureAccuracy(t *testing.T, d time.Duration, base float64, placement string) (accuracy, error) {
	var r accuracy
	n, srv := upPlan(t, starPlanAt(t, d, placement))
	h0, h1, h2, h3 := host(n, "h0"), host(n, "h1"), host(n, "h2"), host(n, "h3")
	snet0, err := netOf(n, []string{"h0", "h3"})
	if err != nil {
		return r, err
	}
	sampler := health.StartSampler(nil, health.SamplerOptions{Interval: 100 * time.Millisecond, Namespaces: n.Namespaces(), PacketCPUs: srv.PacketCPUs()})

	// Where probes enter s0, and where they reach h3.
	const port = 9999
	w, err := watchProbes(n, "h2", "h3", port)
	if err != nil {
		return r, err
	}
	load, err := startPaced(h1, h0, 5301, 0.95*1e9/8)
	if err != nil {
		w.stop()
		return r, err
	}
	time.Sleep(300 * time.Millisecond) // the load reaches its rate
	sent, err := sendProbes(h2, h3, port, 1500, 500*time.Microsecond)
	time.Sleep(2*d + 50*time.Millisecond)
	loadBytes, loadSecs := load.stop()
	cs, arrived, rerr := w.stop()
	hr := sampler.Stop()
	st := srv.Stop()
	if err = firstErr(err, rerr); err != nil {
		return r, err
	}
	loadRate := float64(loadBytes) * 8 / loadSecs

	// Every probe arrives, in order, each within the bars.
	if arrived != sent || len(cs) < sent*99/100 {
		return r, fmt.Errorf("%d probes sent, %d arrived, %d timed at both ends", sent, arrived, len(cs))
	}
	errs := make([]time.Duration, len(cs))
	for i, c := range cs {
		errs[i] = c.delay - d
	}
	slices.Sort(errs)
	r.median, r.p99 = errs[len(errs)/2], errs[len(errs)*99/100]
	b50, b99 := lineBars(d)
	tot := st.Totals()
	t.Logf("D %v: probe error median %v p99 %v max %v (bars %v / %v); line late p50 %v p99 %v, %.0f Mbit/s paced load, line CPU %.0f%% of a core = %.2f s per Gbit",
		d, r.median, r.p99, errs[len(errs)-1], b50, b99, st.Late.Quantile(.5), st.Late.Quantile(.99), loadRate/1e6,
		100*st.CPUTime.Seconds()/st.Running.Seconds(), st.CPUTime.Seconds()/(float64(tot.Bytes)*8/1e9))
	if r.median > b50 || r.median < -b50 || r.p99 > b99 {
		return r, fmt.Errorf("D %v: median error %v (bar %v), p99 %v (bar %v)", d, r.median, b50, r.p99, b99)
	}
	if loadRate < 0.9*0.95*base {
		return r, fmt.Errorf("the paced load reached only %.0f Mbit/s", loadRate/1e6)
	}
	// No loss anywhere: the paced flow never fills a queue, and nothing
	// outside the queues may drop.
	if tot.BufferDrops+tot.SendErrors+tot.QueueDrops+tot.Inversions > 0 {
		return r, fmt.Errorf("line: %+v", tot)
	}
	if hr.Softnet.Dropped > 0 || len(hr.Drops) > 0 {
		return r, fmt.Errorf("drops outside the queues: softnet %+v, interfaces %+v", hr.Softnet, hr.Drops)
	}
	if retr, ofo := snet0(); retr > 0 || ofo > 0 {
		return r, fmt.Errorf("the paced flow saw %d retransmissions and %d out-of-order segments", retr, ofo)
	}

	r.goodput = goodput(t, d, placement)
	t.Logf("D %v: unpaced goodput %.1f Mbit/s, %.1f %% of the undelayed link's", d, r.goodput/1e6, 100*r.goodput/base)
	if r.goodput < 0.95*base {
		return r, fmt.Errorf("D %v: goodput %.1f Mbit/s is below 95 %% of %.1f", d, r.goodput/1e6, base/1e6)
	}
	return r, nil
}

// netOf returns a function that reads the hosts' TCP retransmissions and
// out-of-order queueings since now.
func netOf(n *netbuild.Network, hosts []string) (func() (uint64, uint64), error) {
	read := func() (retr, ofo uint64, err error) {
		for _, h := range hosts {
			err = nsexec.Do(n.Netns(h), func() error {
				s, err := os.ReadFile("/proc/thread-self/net/snmp")
				if err != nil {
					return err
				}
				x, err := os.ReadFile("/proc/thread-self/net/netstat")
				if err != nil {
					return err
				}
				retr += counter(string(s), "Tcp:", "RetransSegs")
				ofo += counter(string(x), "TcpExt:", "TCPOFOQueue")
				return nil
			})
			if err != nil {
				return 0, 0, err
			}
		}
		return retr, ofo, nil
	}
	r0, o0, err := read()
	if err != nil {
		return nil, err
	}
	return func() (uint64, uint64) {
		r1, o1, _ := read()
		return r1 - r0, o1 - o0
	}, nil
}

// counter finds name in a /proc/net/snmp-style table (a header line and a
// value line per prefix).
func counter(text, prefix, name string) uint64 {
	lines := strings.Split(text, "\n")
	for i := 0; i+1 < len(lines); i++ {
		if !strings.HasPrefix(lines[i], prefix) || !strings.HasPrefix(lines[i+1], prefix) {
			continue
		}
		keys, vals := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		for k := range keys {
			if keys[k] == name && k < len(vals) {
				v, _ := strconv.ParseUint(vals[k], 10, 64)
				return v
			}
		}
	}
	return 0
}

type probe struct {
	seq int
	at  int64 // kernel receive stamp, CLOCK_REALTIME ns
}

// A tap reads the UDP probes arriving on an interface, with the kernel's
// receive stamps.
type tap struct {
	fd   int
	done chan struct{}
	wg   sync.WaitGroup
	got  []probe
}

// startTap taps the probes an interface receives, or with outgoing those
// it transmits.
func startTap(ns, iface string, port uint16, outgoing bool) (*tap, error) {
	tp := &tap{fd: -1, done: make(chan struct{})}
	err := nsexec.Do(ns, func() error {
		ifc, err := net.InterfaceByName(iface)
		if err != nil {
			return err
		}
		// Only taps of every protocol see what a device transmits.
		proto := htons(unix.ETH_P_IP)
		if outgoing {
			proto = htons(unix.ETH_P_ALL)
		}
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(proto))
		if err != nil {
			return err
		}
		tp.fd = fd
		if !outgoing {
			unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1)
		}
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 16<<20)
		return unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: proto, Ifindex: ifc.Index})
	})
	if err != nil {
		if tp.fd >= 0 {
			unix.Close(tp.fd)
		}
		return nil, fmt.Errorf("tap %s in %s: %w", iface, ns, err)
	}
	tp.wg.Add(1)
	go func() {
		defer tp.wg.Done()
		buf := make([]byte, 65536)
		oob := make([]byte, 64)
		for {
			wait, stopping := 20, false
			select {
			case <-tp.done:
				wait, stopping = 0, true
			default:
			}
			pfd := []unix.PollFd{{Fd: int32(tp.fd), Events: unix.POLLIN}}
			if n, _ := unix.Poll(pfd, wait); n <= 0 {
				if stopping {
					return
				}
				continue
			}
			n, oobn, _, from, err := unix.Recvmsg(tp.fd, buf, oob, unix.MSG_DONTWAIT)
			if err != nil {
				continue
			}
			if ll, ok := from.(*unix.SockaddrLinklayer); !ok || (ll.Pkttype == unix.PACKET_OUTGOING) != outgoing {
				continue
			}
			seq, ok := probeSeq(buf[:n], port)
			if !ok {
				continue
			}
			tp.got = append(tp.got, probe{seq: seq, at: stamp(oob[:oobn])})
		}
	}()
	return tp, nil
}

// stop returns what arrived, in arrival order: what the socket still
// holds is read first (the reader may lag on a loaded machine).
func (tp *tap) stop() []probe {
	close(tp.done)
	tp.wg.Wait()
	unix.Close(tp.fd)
	return tp.got
}

func byseq(ps []probe) map[int]int64 {
	m := map[int]int64{}
	for _, p := range ps {
		m[p.seq] = p.at
	}
	return m
}

// probeSeq reads our probe's sequence number from an IPv4 packet (an
// AF_PACKET SOCK_RAW read starts at the Ethernet header).
func probeSeq(b []byte, port uint16) (int, bool) {
	if len(b) < 14+20+8+8 {
		return 0, false
	}
	ip := b[14:]
	hl := int(ip[0]&0x0f) * 4
	if ip[0]>>4 != 4 || ip[9] != unix.IPPROTO_UDP || len(ip) < hl+16 {
		return 0, false
	}
	udp := ip[hl:]
	if binary.BigEndian.Uint16(udp[2:]) != port {
		return 0, false
	}
	return int(binary.BigEndian.Uint64(udp[8:])), true
}

func stamp(oob []byte) int64 {
	msgs, _ := unix.ParseSocketControlMessage(oob)
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SO_TIMESTAMPNS && len(m.Data) >= 16 {
			return int64(binary.NativeEndian.Uint64(m.Data))*1e9 + int64(binary.NativeEndian.Uint64(m.Data[8:]))
		}
	}
	return 0
}

// A prober sends numbered UDP datagrams from src to dst's port; dst has a
// socket that takes them (else it would answer port unreachable).
type prober struct {
	sink, conn *net.UDPConn
	msg        []byte
}

func openProber(src, dst flows.Host, port uint16) (*prober, error) {
	p := &prober{msg: make([]byte, 8)}
	err := nsexec.Do(dst.Netns, func() error {
		var err error
		p.sink, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(dst.Addr, port)))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("probe sink: %w", err)
	}
	go func() {
		buf := make([]byte, 64)
		for {
			if _, err := p.sink.Read(buf); err != nil {
				return
			}
		}
	}()
	err = nsexec.Do(src.Netns, func() error {
		var err error
		p.conn, err = net.DialUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(src.Addr, 0)), net.UDPAddrFromAddrPort(netip.AddrPortFrom(dst.Addr, port)))
		return err
	})
	if err != nil {
		p.sink.Close()
		return nil, fmt.Errorf("probe socket: %w", err)
	}
	return p, nil
}

func (p *prober) send(seq int) error {
	binary.BigEndian.PutUint64(p.msg, uint64(seq))
	if _, err := p.conn.Write(p.msg); err != nil {
		return fmt.Errorf("probe %d: %w", seq, err)
	}
	return nil
}

func (p *prober) close() {
	p.conn.Close()
	p.sink.Close()
}

// sendProbes sends n numbered UDP datagrams from src to dst, gap apart on
// average.
func sendProbes(src, dst flows.Host, port uint16, n int, gap time.Duration) (int, error) {
	p, err := openProber(src, dst, port)
	if err != nil {
		return 0, err
	}
	defer p.close()
	next := time.Now()
	for i := 0; i < n; i++ {
		if err := p.send(i); err != nil {
			return i, err
		}
		next = next.Add(gap)
		time.Sleep(time.Until(next))
	}
	return n, nil
}

// paced is a TCP flow paced at a rate (bytes/s) by the kernel; rate 0
// does not pace.
type paced struct {
	conn  net.Conn
	got   chan uint64
	n     atomic.Uint64 // received so far
	start time.Time
}

func (p *paced) received() uint64 { return p.n.Load() }

func startPaced(src, dst flows.Host, port uint16, rate float64) (*paced, error) {
	ln, err := flows.Listen(dst.Netns, dst.Addr, port)
	if err != nil {
		return nil, err
	}
	p := &paced{got: make(chan uint64, 1)}
	go func() {
		defer ln.Close()
		c, err := ln.Accept()
		if err != nil {
			p.got <- 0
			return
		}
		defer c.Close()
		buf := make([]byte, 1<<20)
		for {
			k, err := c.Read(buf)
			p.n.Add(uint64(k))
			if err != nil {
				p.got <- p.n.Load()
				return
			}
		}
	}()
	err = nsexec.Do(src.Netns, func() error {
		d := net.Dialer{LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(src.Addr, 0)),
			Control: func(_, _ string, rc syscall.RawConn) error {
				if rate == 0 {
					return nil
				}
				var serr error
				rc.Control(func(fd uintptr) {
					serr = unix.SetsockoptUint64(int(fd), unix.SOL_SOCKET, unix.SO_MAX_PACING_RATE, uint64(rate))
				})
				return serr
			}}
		var err error
		p.conn, err = d.Dial("tcp4", netip.AddrPortFrom(dst.Addr, port).String())
		return err
	})
	if err != nil {
		ln.Close()
		return nil, err
	}
	p.start = time.Now()
	go func() {
		buf := make([]byte, 256<<10)
		for {
			if _, err := p.conn.Write(buf); err != nil {
				return
			}
		}
	}()
	return p, nil
}

func (p *paced) stop() (uint64, float64) {
	secs := time.Since(p.start).Seconds()
	p.conn.Close()
	return <-p.got, secs
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }
