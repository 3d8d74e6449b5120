package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"cclab/internal/rcuexpedite"
	"cclab/internal/runid"
	"cclab/orchestrator/cleanup"
)

// What the tests that run the real binary share: it is built once, as
// `make build` builds it, into a directory removed when they end.
var made struct {
	once sync.Once
	dir  string
	bin  string
	err  error
	// run: one finished run of shortFlows by that binary.
	runOnce sync.Once
	run     string
	runErr  error
}

// madeCclab builds cclab with `make build` (the Makefile stamps the
// commit into it) and returns its path.
func madeCclab(t *testing.T) string {
	t.Helper()
	made.once.Do(func() {
		if made.dir, made.err = os.MkdirTemp("", "cclab-made-"); made.err != nil {
			return
		}
		made.bin = filepath.Join(made.dir, "cclab")
		cmd := exec.Command("make", "-C", "../..", "build", "BIN="+made.bin)
		if out, err := cmd.CombinedOutput(); err != nil {
			made.err = fmt.Errorf("make build: %v\n%s", err, out)
		}
	})
	if made.err != nil {
		t.Fatal(made.err)
	}
	return made.bin
}

// asMainEnv makes this test binary act as cclab itself when a test starts
// it (or a command of cclab re-executes it, as `topo up` does to start the
// supervisor): the commands are tested as the processes they are.
const asMainEnv = "CCLAB_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Setenv(asMainEnv, "1")
	code := m.Run()
	if made.dir != "" {
		os.RemoveAll(made.dir)
	}
	os.Exit(code)
}

// tinyExperiment writes an experiment on the 2:1 star (4 namespaces),
// without calibration so that its flows start a second after `cclab
// run`: workload is its `workload:` list.
func tinyExperiment(t *testing.T, workload string) string {
	t.Helper()
	topo, err := filepath.Abs("../../topologies/repro-star-2.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "tiny.yaml")
	body := "name: tiny\ntopology: " + topo + "\nemulation: {calibrate: false}\nworkload:\n" + workload
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// longFlows is a workload that runs far longer than any test waits.
const longFlows = "  - name: l\n    long: {src: h1, dst: h0, stop: 60s, count: 2}\n"

// shortFlows: three rounds of a 2:1 incast of 200 KB flows, 100 ms apart
// (the run's flows take half a second).
const shortFlows = "  - name: i\n    incast: {dst: h0, fan_in: 2, size: 200KB, repeat: 3, every: 100ms}\n"

// finishedRun is the run directory of one complete run of shortFlows by
// the binary `make build` makes, run once for the tests that read one.
func finishedRun(t *testing.T) string {
	t.Helper()
	bin := madeCclab(t)
	made.runOnce.Do(func() {
		id := runid.New()
		defer cleanup.Clean(context.Background(), id)
		exp := filepath.Join(made.dir, "short.yaml")
		body, err := os.ReadFile(tinyExperiment(t, shortFlows))
		if err == nil {
			err = os.WriteFile(exp, body, 0o644)
		}
		if err != nil {
			made.runErr = err
			return
		}
		out, err := exec.Command(bin, "run", exp, "--run", string(id), "--out", made.dir, "--quiet").CombinedOutput()
		if err != nil {
			made.runErr = fmt.Errorf("cclab run: %v\n%s", err, out)
			return
		}
		made.run = filepath.Join(made.dir, string(id))
	})
	if made.runErr != nil {
		t.Fatal(made.runErr)
	}
	return made.run
}

// waitFor polls until cond holds, failing the test after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// rcuHolders lists the rcu_expedited holders' markers of run id ("" for
// every run's).
func rcuHolders(id runid.ID) []string {
	m, _ := filepath.Glob(filepath.Join(rcuexpedite.System.StateRoot, rcuexpedite.HoldersDir, string(id)+"*"))
	return m
}

// rcuValue reads the knob.
func rcuValue(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(rcuexpedite.System.Path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// rcuBefore is the knob's value before a test's runs, and whether it can
// be checked after: not while other runs on this machine hold it.
func rcuBefore(t *testing.T) (value string, checkable bool) {
	return rcuValue(t), len(rcuHolders("")) == 0
}

// nothingLeft asserts that nothing of run id remains: namespaces, state
// and BPF directories, cgroup, its hold on rcu_expedited; and, when no
// other run holds the knob, that the knob is back at before.
func nothingLeft(t *testing.T, id runid.ID, before string, checkable bool) {
	t.Helper()
	if left, err := cleanup.Remains(id); err != nil || len(left) > 0 {
		t.Errorf("run %s: remains %v (%v)", id, left, err)
	}
	if m := rcuHolders(id); len(m) > 0 {
		t.Errorf("run %s still holds rcu_expedited: %v", id, m)
	}
	if checkable && len(rcuHolders("")) == 0 {
		if v := rcuValue(t); v != before {
			t.Errorf("rcu_expedited is %s, was %s before the run", v, before)
		}
	}
}

// cleanAfter removes whatever run id left when the test ends, whatever
// happened in it.
func cleanAfter(t *testing.T, id runid.ID) {
	t.Cleanup(func() {
		cleanup.Clean(context.Background(), id)
		rcuexpedite.System.Settle()
	})
}
