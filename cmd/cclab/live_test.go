package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"cclab/internal/runid"
	"cclab/orchestrator/cleanup"
	"cclab/orchestrator/linkchange"
	"cclab/orchestrator/live"
	"cclab/orchestrator/netbuild"
	"cclab/orchestrator/watch"
)

// cclabProc runs this test binary as cclab (TestMain) in a process of its
// own: for commands that replace themselves (exec) or must be a process.
func cclabProc(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		}
		t.Fatalf("cclab %v: %v", args, err)
	}
	return string(out), 0
}

// bringUp brings a topology file up under a fresh id and tears it down at
// the end of the test.
func bringUp(t *testing.T, file string, args ...string) runid.ID {
	t.Helper()
	id := runid.New()
	t.Cleanup(func() { (&netbuild.Network{ID: id}).Down(context.Background()) })
	out, err := runCclab(t, append([]string{"topo", "up", "--run", string(id), file}, args...)...)
	if err != nil {
		t.Fatalf("topo up: %v\n%s", err, out)
	}
	return id
}

var pingTime = regexp.MustCompile(`time=([0-9.]+) ms`)

// medianPing pings addr from node 11 times and returns the median RTT in
// ms (failing when one is lost or faster than the configured floor).
func medianPing(t *testing.T, id runid.ID, node, addr string) float64 {
	t.Helper()
	out, rc := cclabProc(t, "exec", "--run", string(id), node, "--", "ping", "-c", "11", "-i", "0.1", "-W", "1", addr)
	ms := pingTime.FindAllStringSubmatch(out, -1)
	if rc != 0 || len(ms) != 11 {
		t.Fatalf("ping %s -> %s (rc %d):\n%s", node, addr, rc, out)
	}
	var rtts []float64
	for _, m := range ms {
		v, _ := strconv.ParseFloat(m[1], 64)
		rtts = append(rtts, v)
	}
	slices.Sort(rtts)
	return rtts[5]
}

// After `topo up` of a topology with delays: ping works with the
// configured RTT within the line's bars, exec passes the command's exit
// status, an iperf3 flow carries INT records, a second up of the same id
// is refused, link set takes effect at once (its p99 under the 5 ms bar)
// and refuses bad input naming the field, and after kill -9 of the
// supervisor `cclab clean --run` leaves nothing.
func TestLiveTopology(t *testing.T) {
	const file = "../../topologies/repro-star-2-1ms.yaml" // 1 ms links: a 4 ms RTT
	id := bringUp(t, file)
	st, err := live.ReadState(id)
	if err != nil || !st.Alive() || !st.INT || st.DelayPorts != 3 {
		t.Fatalf("live.json %+v (%v): want a live supervisor with INT and 3 delayed ports", st, err)
	}
	if out, err := runCclab(t, "topo", "up", "--run", string(id), file); err == nil || !strings.Contains(err.Error(), "is up") {
		t.Fatalf("a second topo up of run %s: %v\n%s", id, err, out)
	}

	// Two passes of the line (2 ms each way), at the median each within
	// its p50 bound (5 % + 10 us, docs/fidelity.md), plus the stack's own.
	if med := medianPing(t, id, "h1", "198.18.0.1"); med < 4.0 || med > 4.0+2*(0.1+0.01)+0.2 {
		t.Errorf("ping median %.3f ms: configured 4 ms", med)
	}
	if _, rc := cclabProc(t, "exec", "--run", string(id), "h1", "--", "sh", "-c", "exit 7"); rc != 7 {
		t.Errorf("exec of `exit 7` returned %d", rc)
	}
	if out, rc := cclabProc(t, "exec", "--run", string(id), "h9", "--", "true"); rc == 0 || !strings.Contains(out, `no node "h9"`) {
		t.Errorf("exec in a node that does not exist: rc %d\n%s", rc, out)
	}

	// INT: an iperf3 flow started by exec (in the run's cgroup) gets
	// records stamped into its packets.
	c, err := live.Dial(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	gbps := iperf3(t, id, "h1", "h0", "1")
	if gbps < 80e6 || gbps > 101e6 {
		t.Errorf("iperf3 at 100 Mbit/s: %.1f Mbit/s", gbps/1e6)
	}
	s1, err := c.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s1.Switch.Stamped == 0 || s1.Line == nil || s1.Line.Packets == 0 {
		t.Errorf("after an iperf3 flow: %d INT records stamped, line %+v", s1.Switch.Stamped, s1.Line)
	}

	// watch --json while a flow runs: JSON lines, the sender's socket in
	// each, the switch's ports from the second on.
	flowDone := make(chan struct{})
	go func() {
		defer close(flowDone)
		iperf3(t, id, "h1", "h0", "2")
	}()
	time.Sleep(800 * time.Millisecond) // the server's start, then into the flow
	wout, err := runCclab(t, "watch", "--run", string(id), "--json", "--count", "5", "--interval", "100ms")
	<-flowDone
	if err != nil {
		t.Fatalf("watch: %v\n%s", err, wout)
	}
	lines := strings.Split(strings.TrimSpace(wout), "\n")
	var sending int
	for i, l := range lines {
		var s watch.Sample
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatalf("watch --json line %d: %v\n%s", i+1, err, l)
		}
		if slices.ContainsFunc(s.Flows, func(f watch.Flow) bool { return f.Host == "h1" && f.Sender && f.SRTTUs >= 4000 }) {
			sending++
		}
		if len(s.Ports) != 3 {
			t.Errorf("watch sample %d: %d switch ports, want 3", i+1, len(s.Ports))
		}
	}
	if len(lines) != 5 || sending < 3 {
		t.Errorf("watch --json: %d lines, %d with h1's flow sending (want 5, most)", len(lines), sending)
	}

	// Rate: the flow follows the new one.
	if out, err := runCclab(t, "link", "set", "--run", string(id), "s0:h0", "rate=50Mbit"); err != nil {
		t.Fatalf("link set: %v\n%s", err, out)
	}
	if bps := iperf3(t, id, "h1", "h0", "1"); bps < 40e6 || bps > 51e6 {
		t.Errorf("iperf3 after rate=50Mbit: %.1f Mbit/s", bps/1e6)
	}
	ports, err := c.Ports(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ports {
		if p.Node == "s0" && p.Iface == "h0" && p.RateBps != 50e6 {
			t.Errorf("the INT switch stamps %d bit/s on s0/h0 after rate=50Mbit", p.RateBps)
		}
	}

	// Delay: the line holds the new one (a 2 ms link: 3 ms each way).
	if out, err := runCclab(t, "link", "set", "--run", string(id), "s0:h0", "delay=2ms"); err != nil {
		t.Fatalf("link set delay: %v\n%s", err, out)
	}
	if med := medianPing(t, id, "h1", "198.18.0.1"); med < 6.0 || med > 6.0+2*(0.15+0.01)+0.2 {
		t.Errorf("ping median %.3f ms after delay=2ms, configured 6 ms", med)
	}

	// Bad input: every field named, nothing changed.
	for _, bad := range []struct {
		args []string
		want []string
	}{
		{[]string{"s0:h9", "rate=1Gbit"}, []string{`no node "h9"`}},
		{[]string{"spine", "rate=1Gbit"}, []string{"tiers: host, receiver"}},
		{[]string{"s0:h1", "rate=10Tbit", "buffer=1B", "state=sideways"}, []string{"rate 10000Gbit: out of range", "buffer 1B: out of range", `state "sideways"`}},
		{[]string{"s0>h1", "delay=2ms"}, []string{"both directions"}},
		{[]string{"s0:h1", "colour=red"}, []string{"unknown field colour"}},
	} {
		out, err := runCclab(t, append([]string{"link", "set", "--run", string(id)}, bad.args...)...)
		if err == nil {
			t.Errorf("link set %v succeeded", bad.args)
			continue
		}
		for _, w := range bad.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("link set %v: %q does not say %q\n%s", bad.args, err, w, out)
			}
		}
	}
	s2, err := c.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(s2.Changes) != 2 {
		t.Errorf("changes recorded: %+v, want only the two that succeeded", s2.Changes)
	}

	// The bar: from the request to the change in force, p99 under 5 ms,
	// over changes of a whole tier's rate and buffer.
	var took []time.Duration
	for i := range 100 {
		rate, buf := "90Mbit", "600KB"
		if i%2 == 1 {
			rate, buf = "100Mbit", "640KB"
		}
		begin := time.Now()
		if _, err := c.SetLink(context.Background(), linkchange.Request{Target: "host", Rate: rate, Buffer: buf}); err != nil {
			t.Fatal(err)
		}
		took = append(took, time.Since(begin))
	}
	slices.Sort(took)
	p99 := took[len(took)*99/100-1]
	t.Logf("link set (tier rate and buffer, 2 links): p50 %v, p99 %v, max %v", took[len(took)/2], p99, took[len(took)-1])
	if p99 > 5*time.Millisecond {
		t.Errorf("link set p99 %v, bar 5 ms", p99)
	}

	// A change that fails half way is undone: with h2's link gone (its
	// veth pair deleted under the supervisor), a change of the whole
	// host tier fails at h2 after h1's link took it, and h1's link is
	// back at its rate.
	if out, rc := cclabProc(t, "exec", "--run", string(id), "h2", "--", "ip", "link", "del", "eth0"); rc != 0 {
		t.Fatalf("delete h2's link: rc %d\n%s", rc, out)
	}
	if out, err := runCclab(t, "link", "set", "--run", string(id), "host", "rate=30Mbit"); err == nil || !strings.Contains(err.Error(), "h2") {
		t.Errorf("link set of a tier with a link gone: %v\n%s", err, out)
	}
	ports, err = c.Ports(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ports {
		if p.Node == "s0" && p.Iface == "h1" && p.RateBps != 100e6 {
			t.Errorf("s0/h1 stamps %d bit/s after a failed change, want its 100 Mbit/s back", p.RateBps)
		}
	}
	if out, rc := cclabProc(t, "exec", "--run", string(id), "h1", "--", "tc", "class", "show", "dev", "eth0"); rc != 0 || !strings.Contains(out, "rate 100Mbit") {
		t.Errorf("h1's port after a failed change (rc %d):\n%s", rc, out)
	}

	// kill -9 of the supervisor, then clean: nothing is left.
	if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if out, err := runCclab(t, "topo", "status", "--run", string(id)); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Errorf("topo status with the supervisor killed: %v\n%s", err, out)
	}
	if out, err := runCclab(t, "clean", "--run", string(id)); err != nil {
		t.Fatalf("clean: %v\n%s", err, out)
	}
	if ns, _ := cleanup.Namespaces(id); len(ns) > 0 {
		t.Errorf("namespaces left: %v", ns)
	}
	for _, p := range []string{id.StateDir(), id.BPFDir(), filepath.Join("/sys/fs/cgroup/unified", runid.Mark+string(id))} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left (%v)", p, err)
		}
	}
}

// iperf3 runs a flow of secs seconds from src to dst of a live run with
// `cclab exec` and returns the receiver's rate in bit/s.
func iperf3(t *testing.T, id runid.ID, src, dst, secs string, extra ...string) float64 {
	t.Helper()
	n, err := netbuild.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := n.Plan.Node(dst)
	port := fmt.Sprint(5300 + time.Now().UnixNano()%500)
	srv := exec.Command(os.Args[0], "exec", "--run", string(id), dst, "--", "iperf3", "-s", "-1", "-p", port)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Wait()
	time.Sleep(300 * time.Millisecond)
	args := append([]string{"exec", "--run", string(id), src, "--", "iperf3", "-c", d.Addr.String(), "-p", port, "-t", secs, "-J"}, extra...)
	out, rc := cclabProc(t, args...)
	if rc != 0 {
		srv.Process.Kill()
		t.Fatalf("iperf3 %s -> %s: rc %d\n%s", src, dst, rc, out)
	}
	var res struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("iperf3 output: %v\n%s", err, out)
	}
	return res.End.SumReceived.BitsPerSecond
}

// `topo up --cc powertcp` registers PowerTCP with the calibrated
// parameters and makes it every host's default: a plain iperf3 flow runs
// under it, and when the bottleneck's rate halves mid-flow the flow
// follows within the next 100 ms interval (25 RTTs of this path; iperf3's
// finest), with no interval after it above the new rate.
func TestLiveLawFollowsRate(t *testing.T) {
	id := bringUp(t, "../../topologies/repro-star-2-1ms.yaml", "--cc", "powertcp")
	st, err := live.ReadState(id)
	if err != nil || st.Law != "powertcp" || !slices.ContainsFunc(st.Settings, func(s string) bool { return strings.HasPrefix(s, "powertcp.base_rtt_ns=") }) {
		t.Fatalf("live.json %+v (%v): want powertcp registered with a calibrated base RTT", st, err)
	}
	// The topology claims the registration while it is up.
	if out, err := runCclab(t, "cc", "load", "powertcp", "powertcp.base_rtt_ns=1000000"); err == nil || !strings.Contains(err.Error(), string(id)) {
		t.Errorf("cc load powertcp with other parameters while topology %s runs on it: %v\n%s", id, err, out)
	}
	out, rc := cclabProc(t, "exec", "--run", string(id), "h1", "--", "sysctl", "-n", "net.ipv4.tcp_congestion_control")
	if rc != 0 || strings.TrimSpace(out) != "powertcp" {
		t.Fatalf("h1's default congestion control: %q (rc %d)", out, rc)
	}
	n, err := netbuild.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	h0, _ := n.Plan.Node("h0")
	srv := exec.Command(os.Args[0], "exec", "--run", string(id), "h0", "--", "iperf3", "-s", "-1", "-p", "5302")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Wait()
	time.Sleep(300 * time.Millisecond)
	// The watch shows the law's signal on the flow's socket.
	watched := make(chan string, 1)
	go func() {
		time.Sleep(800 * time.Millisecond)
		out, err := runCclab(t, "watch", "--run", string(id), "--json", "--count", "3")
		if err != nil {
			out += err.Error()
		}
		watched <- out
	}()
	changed := make(chan error, 1)
	go func() {
		time.Sleep(1500 * time.Millisecond)
		_, err := runCclab(t, "link", "set", "--run", string(id), "s0:h0", "rate=50Mbit")
		changed <- err
	}()
	out, rc = cclabProc(t, "exec", "--run", string(id), "h1", "--", "iperf3", "-c", h0.Addr.String(), "-p", "5302", "-t", "3", "-i", "0.1", "-J")
	if err := <-changed; err != nil {
		t.Fatal(err)
	}
	var withSignal int
	for _, l := range strings.Split(strings.TrimSpace(<-watched), "\n") {
		var s watch.Sample
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatalf("watch --json: %v\n%s", err, l)
		}
		if slices.ContainsFunc(s.Flows, func(f watch.Flow) bool {
			return f.Sender && f.Law != nil && f.Law.Law == "powertcp" && f.Law.SignalName != ""
		}) {
			withSignal++
		}
	}
	if withSignal < 2 {
		t.Errorf("watch: %d of 3 samples show PowerTCP's signal on the flow", withSignal)
	}
	if rc != 0 {
		t.Fatalf("iperf3: rc %d\n%s", rc, out)
	}
	var res struct {
		Intervals []struct {
			Sum struct {
				Start float64 `json:"start"`
				Bps   float64 `json:"bits_per_second"`
			} `json:"sum"`
		} `json:"intervals"`
		End struct {
			CC string `json:"sender_tcp_congestion"`
		} `json:"end"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("iperf3 output: %v\n%s", err, out)
	}
	if res.End.CC != "powertcp" {
		t.Errorf("iperf3's flow ran %q", res.End.CC)
	}
	var series []string
	first := -1
	for i, iv := range res.Intervals {
		series = append(series, fmt.Sprintf("%.1f:%.0f", iv.Sum.Start, iv.Sum.Bps/1e6))
		if first < 0 && i > 2 && iv.Sum.Bps < 55e6 {
			first = i
		}
	}
	t.Logf("Mbit/s per 100 ms: %s", strings.Join(series, " "))
	if first < 0 || res.Intervals[first].Sum.Start < 1.0 {
		t.Fatalf("the flow never went below 55 Mbit/s, or before the change (first at %d)", first)
	}
	// The sender's intervals count bytes written to the socket: one
	// interval may take some of its neighbour's, so the bounds after the
	// change hold over pairs of intervals.
	for i, iv := range res.Intervals {
		if i >= 2 && i < first-1 && iv.Sum.Bps < 70e6 {
			t.Errorf("before the change, interval %.1f s: %.1f Mbit/s (100 Mbit/s link)", iv.Sum.Start, iv.Sum.Bps/1e6)
		}
		if i > first && i+1 < len(res.Intervals) {
			pair := (iv.Sum.Bps + res.Intervals[i+1].Sum.Bps) / 2
			if pair > 51e6 || pair < 40e6 {
				t.Errorf("after the change, 200 ms from %.1f s: %.1f Mbit/s (50 Mbit/s link)", iv.Sum.Start, pair/1e6)
			}
		}
	}
}
