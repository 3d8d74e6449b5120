package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cclab/internal/runid"
	"cclab/orchestrator/cleanup"
	"cclab/rundir"
)

// startLongRun starts `cclab run` of a long tiny experiment into out,
// its stdout and stderr to output, and waits until seen() shows its flows
// running.
func startLongRun(t *testing.T, bin string, id runid.ID, out string, output *os.File, seen func() string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "run", tinyExperiment(t, longFlows), "--run", string(id), "--out", out)
	cmd.Stdout, cmd.Stderr = output, output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	waitFor(t, 30*time.Second, "the run's flows start", func() bool { return strings.Contains(seen(), "flows 0/2") })
	return cmd
}

// logFile is a file for a child's output, and what it holds so far.
func logFile(t *testing.T) (*os.File, func() string) {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "output"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, func() string { b, _ := os.ReadFile(f.Name()); return string(b) }
}

// interruptedRunJSON reads what run.json says of the interruption.
func interruptedRunJSON(t *testing.T, dir string) (signal, cause, verdict string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rundir.RunJSON))
	if err != nil {
		t.Fatalf("the interrupted run left no run.json: %v", err)
	}
	var rj struct {
		Interrupted *rundir.Interrupted `json:"interrupted"`
		Fidelity    struct {
			Verdict string `json:"verdict"`
		} `json:"fidelity"`
	}
	if err := json.Unmarshal(b, &rj); err != nil {
		t.Fatal(err)
	}
	if rj.Interrupted == nil {
		t.Fatalf("run.json has no interrupted marker:\n%.2000s", b)
	}
	return rj.Interrupted.Signal, rj.Interrupted.Cause, rj.Fidelity.Verdict
}

// Each signal that ends a run tears it down as Ctrl-C does: nothing of
// it is left, rcu_expedited is back, run.json says interrupted and the
// exit code is the signal's. SIGPIPE is not sent: stdout and stderr go
// to a pipe whose reader closes after the flows start (`cclab run 2>&1 |
// head`). Real runs of the binary `make build` makes, on 4 namespaces.
func TestSignalsTearDown(t *testing.T) {
	bin := madeCclab(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE} {
		name := unix.SignalName(sig)
		t.Run(name, func(t *testing.T) {
			before, checkable := rcuBefore(t)
			id := runid.New()
			cleanAfter(t, id)
			out := t.TempDir()
			var cmd *exec.Cmd
			var output func() string
			if sig == syscall.SIGPIPE {
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				var read atomic.Value // what the reader read, as head would
				read.Store("")
				go func() {
					sc := bufio.NewScanner(r)
					for sc.Scan() {
						read.Store(read.Load().(string) + sc.Text() + "\n")
						if strings.Contains(sc.Text(), "flows 0/2") {
							break
						}
					}
					r.Close() // the reader goes, as head does
				}()
				output = func() string { return read.Load().(string) }
				cmd = startLongRun(t, bin, id, out, w, output)
				w.Close()
			} else {
				var f *os.File
				f, output = logFile(t)
				cmd = startLongRun(t, bin, id, out, f, output)
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("the run did not end within 20 s of %s:\n%s", name, output())
			}
			if code := cmd.ProcessState.ExitCode(); code != 128+int(sig) {
				t.Errorf("exit code %d (%v), want %d:\n%s", code, cmd.ProcessState, 128+int(sig), output())
			}
			nothingLeft(t, id, before, checkable)
			dir := filepath.Join(out, string(id))
			signal, cause, verdict := interruptedRunJSON(t, dir)
			if signal != name || verdict != "interrupted" || !strings.Contains(cause, name) {
				t.Errorf("run.json: interrupted by %q (%q), verdict %q; want %s, interrupted", signal, cause, verdict, name)
			}
			if sig != syscall.SIGINT {
				return
			}
			// The analysis refuses the run, unless --partial; then its
			// summary opens by saying so.
			if _, err := run(t, "analyze", dir, "--quiet"); err == nil || !strings.Contains(err.Error(), "--partial") {
				t.Errorf("analyze of an interrupted run: %v", err)
			}
			sum, err := run(t, "analyze", dir, "--quiet", "--partial")
			if err != nil || !strings.HasPrefix(sum, "experiment tiny") || !strings.HasPrefix(strings.SplitN(sum, "\n", 3)[1], "INTERRUPTED: ") {
				t.Errorf("analyze --partial: %v\n%s", err, sum)
			}
		})
	}
}

// kill -9 leaves the run behind; `cclab clean --run ID` removes all of
// it: namespaces, state, processes in them, its hold on rcu_expedited.
func TestKill9ThenClean(t *testing.T) {
	bin := madeCclab(t)
	before, checkable := rcuBefore(t)
	id := runid.New()
	cleanAfter(t, id)
	f, output := logFile(t)
	cmd := startLongRun(t, bin, id, t.TempDir(), f, output)
	ns, err := cleanup.Namespaces(id)
	if err != nil || len(ns) == 0 {
		t.Fatalf("the running run has no namespaces (%v)", err)
	}
	inodes := map[uint64]bool{}
	for _, n := range ns {
		if st, err := os.Stat(filepath.Join(cleanup.NetnsDir, n)); err == nil {
			inodes[st.Sys().(*syscall.Stat_t).Ino] = true
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if left, _ := cleanup.Namespaces(id); len(left) == 0 {
		t.Fatal("kill -9 left nothing to clean: the test proves nothing")
	}
	if out, err := exec.Command(bin, "clean", "--run", string(id)).CombinedOutput(); err != nil {
		t.Fatalf("cclab clean --run: %v\n%s", err, out)
	}
	nothingLeft(t, id, before, checkable)
	if ps := processesIn(inodes); len(ps) > 0 {
		t.Errorf("processes remain in the run's namespaces: %v", ps)
	}
}

// processesIn lists the processes whose network namespace is one of inodes.
func processesIn(inodes map[uint64]bool) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if st, err := os.Stat(filepath.Join("/proc", e.Name(), "ns", "net")); err == nil && inodes[st.Sys().(*syscall.Stat_t).Ino] {
			out = append(out, e.Name())
		}
	}
	return out
}

// A run whose parent is killed tears down on its own (the parent-death
// signal): cclab runs under a shell, the shell gets SIGKILL.
func TestParentDeathTearsDown(t *testing.T) {
	bin := madeCclab(t)
	before, checkable := rcuBefore(t)
	id := runid.New()
	cleanAfter(t, id)
	out := t.TempDir()
	f, logged := logFile(t)
	sh := exec.Command("sh", "-c", `"$0" run "$1" --run "$2" --out "$3" 2>"$4" & echo $!; wait`,
		bin, tinyExperiment(t, longFlows), string(id), out, f.Name())
	stdout, err := sh.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		sh.Process.Kill()
		sh.Wait()
		t.Fatalf("the shell did not say cclab's pid: %q %v %v", line, err, perr)
	}
	waitFor(t, 30*time.Second, "the run's flows start", func() bool { return strings.Contains(logged(), "flows 0/2") })
	sh.Process.Kill()
	sh.Wait()
	// cclab is no child of the test: wait for its pid to go (or to be a
	// zombie that its new parent has not reaped).
	waitFor(t, 20*time.Second, "cclab ends after its parent was killed", func() bool {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if errors.Is(err, os.ErrNotExist) {
			return true
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		return len(f) > 0 && f[0] == "Z"
	})
	nothingLeft(t, id, before, checkable)
	signal, cause, verdict := interruptedRunJSON(t, filepath.Join(out, string(id)))
	if signal != "SIGHUP" || !strings.Contains(cause, "parent process exited") || verdict != "interrupted" {
		t.Errorf("run.json: interrupted by %q (%q), verdict %q:\n%s", signal, cause, verdict, logged())
	}
}
