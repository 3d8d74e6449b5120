package reproduce

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cclab/orchestrator/experiment"
)

// losslessFile is a suite file with a pfc section over several lines and
// a claim at line 19.
const losslessFile = `name: x
topology: ../../topologies/repro-star-2-1ms.yaml
compare: [timely, dcqcn]
switch:
  int: true
  pfc:
    mode: dynamic
    alpha: 0.11
  queue_sample: 1ms
workload:
  - name: long
    long: {src: h1, dst: h0, start: 0, stop: 1s}
reproduce:
  title: t
  paper: p
  measure: lossless
  seeds: [1, 2, 3]
  claims:
    - id: c
      claim: a claim
      statistic: mean
      n: 3
      band: limit
      paper: {where: "5.2", quote: q}
      value: {cc: dcqcn, metric: pfc_pauses, bound: at_least, limit: 1}
`

// pfcRefused reports whether experiment.Parse still refuses pfc (and
// only that) in a file that is otherwise sound.
func pfcRefused(t *testing.T) bool {
	t.Helper()
	probe := filepath.Join(root, Dir, "probe.yaml")
	_, err := experiment.Parse(probe, []byte(losslessFile[:strings.Index(losslessFile, "reproduce:")]))
	if err != nil && !waitsForPFC(err) {
		t.Fatalf("the probe file: %v", err)
	}
	return err != nil
}

// While the PFC controller is not built, a lossless file of the suite is
// checked but for its pfc section, its claims' errors at their lines,
// and left out of the suite; a good one loads as nothing.
func TestLosslessFilesWaitForPFC(t *testing.T) {
	if !pfcRefused(t) {
		t.Skip("experiment.Parse no longer refuses pfc: the controller is built, and pfc_pending.go can go")
	}
	good := losslessFile
	if _, err := loadSuiteFile(t, good); err != nil {
		t.Fatalf("a good lossless file: %v", err)
	}
	file, err := loadSuiteFile(t, strings.Replace(good, "n: 3", "n: 2", 1))
	if err == nil || !strings.Contains(err.Error(), file+`:19: claim "c": n 2: mean needs at least 3 runs`) {
		t.Fatalf("want claim c's error at its line 19, got %v", err)
	}
	// Its other parts are checked too: a misspelt key of the switch.
	if _, err := loadSuiteFile(t, strings.Replace(good, "queue_sample", "queue_smaple", 1)); err == nil || !strings.Contains(err.Error(), "queue_smaple") {
		t.Fatalf("a misspelt key in a lossless file: %v", err)
	}
	// pfc written on the switch key's line cannot be blanked alone.
	if _, err := withoutPFC([]byte("switch: {pfc: {mode: dynamic}}\n")); err == nil {
		t.Fatal("a pfc entry sharing the switch's line was blanked")
	}
}

// The suite's own lossless files: each refused for its pfc section only,
// and sound without it.
func TestSuiteLosslessFiles(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(root, Dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), "\n  pfc:") {
			continue
		}
		n++
		if _, err := experiment.Parse(p, src); err != nil && !waitsForPFC(err) {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if err := checkWithoutPFC(p, src); err != nil {
			t.Errorf("%v", err)
		}
	}
	if n < 4 {
		t.Errorf("%d lossless files in the suite, want the four of issue 32 (tcd-victim, tcd-fairness, tcd-hadoop, hpcc-pfc-incast)", n)
	}
	// --list names them while they wait; none once the controller is built.
	waiting, err := WaitingForPFC(root)
	if err != nil {
		t.Fatal(err)
	}
	if !pfcRefused(t) {
		n = 0
	}
	if len(waiting) != n {
		t.Errorf("waiting for PFC: %v, want %d files", waiting, n)
	}
}
