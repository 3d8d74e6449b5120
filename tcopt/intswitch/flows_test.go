package intswitch

// Traffic for the switch tests: iperf3 in the namespaces, the senders in a
// cgroup of the run that carries the test-only INT option sender.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"cclab/internal/runid"
	"cclab/tcopt/intswitch/internal/optsender"
)

// senderCgroup makes the run's cgroup for INT senders and, when slots > 0,
// attaches the option sender to it.
func (n *testNet) senderCgroup(slots int) string {
	n.t.Helper()
	cg := filepath.Join("/sys/fs/cgroup/unified", runid.Mark+string(n.id)+"-snd")
	if err := os.Mkdir(cg, 0o755); err != nil {
		n.t.Fatalf("cgroup: %v", err)
	}
	n.t.Cleanup(func() { _ = os.Remove(cg) })
	if slots > 0 {
		s, err := optsender.Attach(cg, slots)
		if err != nil {
			n.t.Fatal(err)
		}
		n.t.Cleanup(func() { s.Close() })
	}
	return cg
}

// iperfServer runs a one-off iperf3 server on node, bound to addr:port.
func (n *testNet) iperfServer(node, addr string, port int) {
	n.t.Helper()
	cmd := exec.Command("ip", "netns", "exec", n.ns(node), "iperf3", "-s", "-1", "-B", addr, "-p", fmt.Sprint(port))
	if err := cmd.Start(); err != nil {
		n.t.Fatalf("iperf3 server: %v", err)
	}
	n.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	for i := 0; i < 100; i++ {
		out, _ := exec.Command("ip", "netns", "exec", n.ns(node), "ss", "-Hltn", "sport", "=", fmt.Sprint(port)).Output()
		if strings.Contains(string(out), addr) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	n.t.Fatalf("iperf3 server on %s %s:%d did not start", node, addr, port)
}

// iperfClient starts an iperf3 client in node (inside cgroup cg), to
// dst:port, with extra arguments; wait with iperfResult.
func (n *testNet) iperfClient(node, cg, dst string, port int, args ...string) *exec.Cmd {
	n.t.Helper()
	inner := append([]string{"exec", "ip", "netns", "exec", n.ns(node), "iperf3", "-J", "-c", dst, "-p", fmt.Sprint(port)}, args...)
	cmd := exec.Command("sh", "-c", fmt.Sprintf("echo $$ > %s/cgroup.procs && %s", cg, strings.Join(inner, " ")))
	cmd.Stdout = &strings.Builder{}
	cmd.Stderr = &strings.Builder{}
	if err := cmd.Start(); err != nil {
		n.t.Fatalf("iperf3 client: %v", err)
	}
	n.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd
}

// iperfResult waits for a client and returns the receiver's bits/s.
func (n *testNet) iperfResult(cmd *exec.Cmd) float64 {
	bps, _ := n.iperfRun(cmd)
	return bps
}

// iperfRun waits for a client and returns the receiver's bits/s and the
// seconds it measured over.
func (n *testNet) iperfRun(cmd *exec.Cmd) (bps, seconds float64) {
	n.t.Helper()
	// A flow that stalls (e.g. on a broken checksum) fails, not hangs.
	timer := time.AfterFunc(30*time.Second, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	err := cmd.Wait()
	out := cmd.Stdout.(*strings.Builder).String()
	if err != nil {
		n.t.Fatalf("iperf3 client: %v\n%s%s", err, out, cmd.Stderr)
	}
	var r struct {
		End struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
				Seconds       float64 `json:"seconds"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		n.t.Fatalf("iperf3 output: %v\n%s", err, out)
	}
	return r.End.SumReceived.BitsPerSecond, r.End.SumReceived.Seconds
}
