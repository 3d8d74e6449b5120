package delay_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"cclab/internal/runid"
	"cclab/orchestrator/cleanup"
	"cclab/orchestrator/delay"
	"cclab/orchestrator/flows"
	"cclab/orchestrator/health"
	"cclab/orchestrator/netbuild"
	"cclab/topology"
)

const childEnv = "CCLAB_DELAY_KILL_CHILD"

// A process serving a delay line that dies by SIGKILL mid-traffic leaves
// only what `cclab clean` removes: its namespaces (with the sinks and
// filters in them), its pinned programs and its state; nothing in the root
// namespace, no process.
func TestKilledLineLeavesNothing(t *testing.T) {
	if id := os.Getenv(childEnv); id != "" {
		serveUntilKilled(t, runid.ID(id))
		return
	}
	id := runid.New()
	t.Cleanup(func() { cleanup.Clean(context.Background(), id) })
	before := rootLinks(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledLineLeavesNothing$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+string(id))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The child says "serving" once its line carries traffic (a ping-pong
	// at the configured RTT), then keeps a flow going.
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "serving") {
				ready <- sc.Text()
			}
		}
		close(ready)
	}()
	select {
	case line, ok := <-ready:
		if !ok {
			cmd.Wait()
			t.Fatal("the child ended before serving")
		}
		t.Log(line)
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the child did not serve within 30 s")
	}
	time.Sleep(200 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	if ns, _ := cleanup.Namespaces(id); len(ns) == 0 {
		t.Fatal("the killed run left no namespaces: the test proves nothing")
	}
	if _, err := os.Stat(filepath.Join(id.BPFDir(), "delay")); err != nil {
		t.Logf("no pinned delay links (classic filters): %v", err)
	}
	rep, err := cleanup.Clean(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("clean: %d namespaces, bpf %q, state %q", len(rep.Namespaces), rep.BPFDir, rep.StateDir)
	if ns, _ := cleanup.Namespaces(id); len(ns) > 0 {
		t.Errorf("namespaces remain: %v", ns)
	}
	for _, d := range []string{id.BPFDir(), id.StateDir()} {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s remains", d)
		}
	}
	if after := rootLinks(t); after != before {
		t.Errorf("root namespace had %d links, now %d", before, after)
	}
}

func rootLinks(t *testing.T) int {
	ls, err := netlink.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	return len(ls)
}

// serveUntilKilled is the child: a delayed line topology, its line, a
// check that it delays, and a flow that runs until the parent kills it.
func serveUntilKilled(t *testing.T, id runid.ID) {
	plan, err := topology.Parse("k.yaml", []byte("name: k\nkind: line\nline: {switches: 2}\nlinks:\n  default: {rate: 100Mbit, buffer: 256KB, delay: 500us}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	opt := netbuild.DefaultOptions()
	opt.DelayEngine = delay.EngineLine
	n, err := netbuild.Up(ctx, id, plan, opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.ServeDelay(ctx, delay.ServeOptions{CPU: -1, Steer: n.Namespaces()}); err != nil {
		t.Fatal(err)
	}
	a, b := host(n, "h0"), host(n, "h1")
	rtt, err := health.PingPong(ctx, "h0", a, "h1", b, 7002, 20)
	if err != nil {
		t.Fatal(err)
	}
	if rtt.MedianNs < int64(3*time.Millisecond) {
		t.Fatalf("RTT %v through 3 links of 500 us: the line is not delaying", time.Duration(rtt.MedianNs))
	}
	go flows.Run(ctx, []flows.Spec{{Src: "h0", Dst: "h1", Stop: time.Minute}},
		flows.Options{Hosts: map[string]flows.Host{"h0": a, "h1": b}, Timeout: time.Minute})
	time.Sleep(300 * time.Millisecond)
	fmt.Printf("serving: RTT %v\n", time.Duration(rtt.MedianNs))
	select {} // until SIGKILL
}
