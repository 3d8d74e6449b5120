package lawload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cclab/internal/nsexec"
	"cclab/internal/runid"
)

// testNet is a sender a and a receiver b joined through a router r whose
// port toward b is the bottleneck (HTB at rate, then a byte FIFO of buf
// bytes), as a switch port would be: drops happen there, not in the
// sender's own qdisc (which TCP small queues would hold back instead).
type testNet struct {
	id      runid.ID
	a, r, b string // namespace names
	addrB   string
	port    int
	portMu  sync.Mutex
}

// The bottleneck port, in namespace r.
const bottleneckDev = "rb"

func run(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func newTestNet(t *testing.T, rateMbit, bufBytes int, offloads bool) *testNet {
	t.Helper()
	id := runid.New()
	n := &testNet{id: id, a: id.Netns("a"), r: id.Netns("r"), b: id.Netns("b"), addrB: "10.77.2.1", port: 5000}
	for _, ns := range []string{n.a, n.r, n.b} {
		run(t, "ip", "netns", "add", ns)
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
		run(t, "ip", "-n", ns, "link", "set", "lo", "up")
	}
	run(t, "ip", "link", "add", "va", "netns", n.a, "type", "veth", "peer", "name", "ra", "netns", n.r)
	run(t, "ip", "link", "add", "vb", "netns", n.b, "type", "veth", "peer", "name", "rb", "netns", n.r)
	for _, s := range []struct{ ns, dev, addr, via string }{
		{n.a, "va", "10.77.1.1/24", "10.77.1.254"},
		{n.r, "ra", "10.77.1.254/24", ""},
		{n.r, "rb", "10.77.2.254/24", ""},
		{n.b, "vb", "10.77.2.1/24", "10.77.2.254"},
	} {
		run(t, "ip", "-n", s.ns, "addr", "add", s.addr, "dev", s.dev)
		run(t, "ip", "-n", s.ns, "link", "set", s.dev, "up")
		if s.via != "" {
			run(t, "ip", "-n", s.ns, "route", "add", "default", "via", s.via)
		}
		if !offloads {
			run(t, "ip", "netns", "exec", s.ns, "ethtool", "-K", s.dev, "tso", "off", "gso", "off", "gro", "off")
		}
	}
	run(t, "ip", "netns", "exec", n.r, "sysctl", "-qw", "net.ipv4.ip_forward=1")
	rate := fmt.Sprintf("%dmbit", rateMbit)
	run(t, "tc", "-n", n.r, "qdisc", "add", "dev", bottleneckDev, "root", "handle", "1:", "htb", "default", "1")
	run(t, "tc", "-n", n.r, "class", "add", "dev", bottleneckDev, "parent", "1:", "classid", "1:1", "htb",
		"rate", rate, "ceil", rate, "burst", "64k", "cburst", "64k")
	run(t, "tc", "-n", n.r, "qdisc", "add", "dev", bottleneckDev, "parent", "1:1", "handle", "10:", "bfifo",
		"limit", fmt.Sprint(bufBytes))
	return n
}

// setCC is a socket Control function selecting the congestion control.
func setCC(name string) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, name)
		})
		if err != nil {
			return err
		}
		if serr != nil {
			return fmt.Errorf("TCP_CONGESTION %s: %w", name, serr)
		}
		return nil
	}
}

// sample is one TCP_INFO reading of a sender.
type sample struct {
	at     time.Duration
	cwnd   uint32 // segments
	rttUs  uint32 // smoothed
	acked  uint64 // bytes
	pacing uint64 // bytes/s
	mss    uint32
	// ssthresh in segments; caState the kernel's congestion state
	// (TCP_CA_Open 0 ... TCP_CA_Loss 4).
	ssthresh uint32
	caState  uint8
}

type flowResult struct {
	cc      string // the socket's congestion control, as the kernel reports it
	samples []sample
}

// bytesBetween returns the bytes acked in [from, to).
func (f flowResult) bytesBetween(from, to time.Duration) uint64 {
	var a, b uint64
	for _, s := range f.samples {
		if s.at <= from {
			a = s.acked
		}
		if s.at <= to {
			b = s.acked
		}
	}
	return b - a
}

// medianRTT returns the median smoothed RTT (us) of samples after from.
func (f flowResult) medianRTT(from time.Duration) uint32 {
	var v []uint32
	for _, s := range f.samples {
		if s.at >= from {
			v = append(v, s.rttUs)
		}
	}
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[len(v)/2]
}

// flows runs n bulk flows a->b with congestion control cc, started
// stagger apart, each sending until dur after the first started.
func (n *testNet) flows(t *testing.T, ctx context.Context, cc string, count int, stagger, dur time.Duration) []flowResult {
	t.Helper()
	n.portMu.Lock()
	n.port++
	port := n.port
	n.portMu.Unlock()
	var ln net.Listener
	err := nsexec.Do(n.b, func() error {
		var err error
		lc := net.ListenConfig{Control: setCC(cc)}
		ln, err = lc.Listen(ctx, "tcp4", fmt.Sprintf("%s:%d", n.addrB, port))
		return err
	})
	if err != nil {
		t.Fatalf("listen in %s: %v", n.b, err)
	}
	defer ln.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				io.Copy(io.Discard, c)
			}()
		}
	}()

	start := time.Now()
	deadline := start.Add(dur)
	res := make([]flowResult, count)
	errs := make([]error, count)
	var fw sync.WaitGroup
	for i := range count {
		fw.Add(1)
		go func() {
			defer fw.Done()
			time.Sleep(time.Duration(i) * stagger)
			res[i], errs[i] = n.sendUntil(ctx, cc, port, start, deadline)
		}()
	}
	fw.Wait()
	ln.Close()
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return res
}

func (n *testNet) sendUntil(ctx context.Context, cc string, port int, start, deadline time.Time) (flowResult, error) {
	var c net.Conn
	err := nsexec.Do(n.a, func() error {
		var err error
		d := net.Dialer{Control: setCC(cc), Timeout: 2 * time.Second}
		c, err = d.DialContext(ctx, "tcp4", fmt.Sprintf("%s:%d", n.addrB, port))
		return err
	})
	if err != nil {
		return flowResult{}, fmt.Errorf("connect with %s: %w", cc, err)
	}
	// Abort at the end (RST): a graceful close would drain a full send
	// buffer at whatever rate the law allows.
	defer c.Close()
	defer c.(*net.TCPConn).SetLinger(0)
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		return flowResult{}, err
	}
	var res flowResult
	raw.Control(func(fd uintptr) {
		res.cc, err = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION)
	})
	if err != nil {
		return flowResult{}, fmt.Errorf("read TCP_CONGESTION: %w", err)
	}
	done := make(chan struct{})
	var sw sync.WaitGroup
	sw.Add(1)
	go func() {
		defer sw.Done()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			var info *unix.TCPInfo
			raw.Control(func(fd uintptr) { info, _ = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) })
			if info != nil {
				res.samples = append(res.samples, sample{
					at: time.Since(start), cwnd: info.Snd_cwnd, rttUs: info.Rtt,
					acked: info.Bytes_acked, pacing: info.Pacing_rate, mss: info.Snd_mss,
					ssthresh: info.Snd_ssthresh, caState: info.Ca_state,
				})
			}
		}
	}()
	buf := make([]byte, 64<<10)
	c.SetWriteDeadline(deadline)
	var werr error
	for ctx.Err() == nil {
		if _, werr = c.Write(buf); werr != nil {
			break
		}
	}
	close(done)
	sw.Wait()
	if werr != nil && !errors.Is(werr, context.DeadlineExceeded) && !isTimeout(werr) {
		return res, fmt.Errorf("send: %w", werr)
	}
	return res, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// jain is Jain's fairness index of xs.
func jain(xs []float64) float64 {
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	if s2 == 0 {
		return 0
	}
	return s * s / (float64(len(xs)) * s2)
}

func filepathDir(p string) string { return p[:strings.LastIndexByte(p, '/')] }

// netstat returns the SNMP extension counters of namespace ns
// (/proc/net/netstat), keyed "TcpExt.TCPDeliveredCE", "IpExt.InCEPkts", ...
func netstat(t *testing.T, ns string) map[string]uint64 {
	t.Helper()
	var data []byte
	err := nsexec.Do(ns, func() error {
		// thread-self: /proc/net follows the process's first thread, which
		// is in another namespace.
		var err error
		data, err = os.ReadFile("/proc/thread-self/net/netstat")
		return err
	})
	if err != nil {
		t.Fatalf("read netstat of %s: %v", ns, err)
	}
	m := map[string]uint64{}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	for i := 0; i+1 < len(lines); i += 2 {
		names, values := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		if len(names) != len(values) || len(names) == 0 || names[0] != values[0] {
			t.Fatalf("netstat of %s: unpaired lines %q / %q", ns, lines[i], lines[i+1])
		}
		prefix := strings.TrimSuffix(names[0], ":")
		for j := 1; j < len(names); j++ {
			v, err := strconv.ParseUint(values[j], 10, 64)
			if err != nil {
				t.Fatalf("netstat of %s: %s = %q", ns, names[j], values[j])
			}
			m[prefix+"."+names[j]] = v
		}
	}
	return m
}
