package cleanup

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"cclab/internal/cgroup2"
	"cclab/internal/runid"

	"github.com/vishvananda/netns"
)

// makeNetns creates a named namespace of run id, as netbuild does.
func makeNetns(t *testing.T, name string) {
	t.Helper()
	done := make(chan error)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			done <- err
			return
		}
		h, err := netns.NewNamed(name)
		if err == nil {
			h.Close()
		}
		if serr := netns.Set(orig); serr == nil {
			runtime.UnlockOSThread()
		}
		orig.Close()
		done <- err
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func start(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	c := exec.Command(args[0], args[1:]...)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	return c
}

// Clean kills processes living in the run's namespaces (found by namespace
// inode) and processes the run recorded, and spares everything else:
// another run's namespace and an unrelated process.
func TestCleanOneRun(t *testing.T) {
	id, other := runid.New(), runid.New()
	t.Cleanup(func() { Clean(context.Background(), id); Clean(context.Background(), other) })
	makeNetns(t, id.Netns("a"))
	makeNetns(t, id.Netns("b"))
	makeNetns(t, other.Netns("a"))
	os.MkdirAll(id.BPFDir(), 0o755)
	cgRoot, err := cgroup2.Mount()
	if err != nil {
		t.Fatal(err)
	}
	// The agent's cgroup, a test's nested one, and another run's.
	ours := []string{filepath.Join(cgRoot, "cclab-"+string(id)), filepath.Join(cgRoot, id.Prefix()+"snd", "inner")}
	theirs := filepath.Join(cgRoot, "cclab-"+string(other))
	for _, d := range append(ours, theirs) {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { os.Remove(theirs) })

	inNetns := start(t, "ip", "netns", "exec", id.Netns("b"), "sleep", "60")
	recorded := start(t, "sleep", "60")
	bystander := start(t, "sleep", "60")
	if err := RecordPID(id, recorded.Process.Pid); err != nil {
		t.Fatal(err)
	}
	// ip netns exec replaces itself with sleep once inside the namespace.
	waitNetns(t, inNetns.Process.Pid, id.Netns("b"))

	rep, err := Clean(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Namespaces) != 2 || rep.StateDir == "" || rep.BPFDir == "" {
		t.Fatalf("report %+v", rep)
	}
	killed := map[int]bool{}
	for _, p := range rep.Killed {
		killed[p] = true
	}
	if !killed[inNetns.Process.Pid] || !killed[recorded.Process.Pid] || killed[bystander.Process.Pid] {
		t.Fatalf("killed %v; in-netns %d, recorded %d, bystander %d", rep.Killed, inNetns.Process.Pid, recorded.Process.Pid, bystander.Process.Pid)
	}
	for _, c := range []*exec.Cmd{inNetns, recorded} {
		if err := c.Wait(); err == nil || c.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("pid %d: %v", c.Process.Pid, err)
		}
	}
	if bystander.ProcessState != nil || syscall.Kill(bystander.Process.Pid, 0) != nil {
		t.Fatal("bystander died")
	}
	if ns, _ := Namespaces(id); len(ns) != 0 {
		t.Fatalf("namespaces left: %v", ns)
	}
	for _, d := range []string{id.StateDir(), id.BPFDir()} {
		if _, err := os.Stat(d); err == nil {
			t.Fatalf("%s left", d)
		}
	}
	if ns, _ := Namespaces(other); len(ns) != 1 {
		t.Fatalf("the other run lost its namespace: %v", ns)
	}
	for _, d := range append(ours, filepath.Dir(ours[1])) {
		if _, err := os.Stat(d); err == nil {
			t.Fatalf("cgroup %s left", d)
		}
	}
	if len(rep.Cgroups) != 3 {
		t.Fatalf("report lists cgroups %v, want 3", rep.Cgroups)
	}
	if _, err := os.Stat(theirs); err != nil {
		t.Fatalf("the other run lost its cgroup: %v", err)
	}
	// Cleaning again finds nothing.
	if rep, err := Clean(context.Background(), id); err != nil || !rep.Empty() {
		t.Fatalf("second clean: %+v %v", rep, err)
	}
}

// A recorded pid that now belongs to another process (same pid, other
// start time) is not killed.
func TestRecordedPIDReuse(t *testing.T) {
	id := runid.New()
	t.Cleanup(func() { Clean(context.Background(), id) })
	c := start(t, "sleep", "60")
	EnsureStateDir(id)
	// Record the pid with a start time that is not its own.
	if err := os.WriteFile(id.StateDir()+"/"+PIDFile, []byte(itoa(c.Process.Pid)+" 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Clean(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Killed) != 0 || syscall.Kill(c.Process.Pid, 0) != nil {
		t.Fatalf("killed a process whose pid was reused: %+v", rep)
	}
}

func waitNetns(t *testing.T, pid int, name string) {
	want, err := os.Stat("/run/netns/" + name)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if got, err := os.Stat("/proc/" + itoa(pid) + "/ns/net"); err == nil && os.SameFile(got, want) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("pid %d never entered %s", pid, name)
}
