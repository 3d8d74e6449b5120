package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cclab/internal/runid"
	"cclab/orchestrator/cleanup"
)

// realRun runs an experiment through `cclab run` on a small star (no
// calibration) and returns its run directory.
func realRun(t *testing.T, out, topo, body string) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("../../topologies", topo))
	if err != nil {
		t.Fatal(err)
	}
	exp := filepath.Join(t.TempDir(), "exp.yaml")
	text := "name: cmp\ntopology: " + abs + "\nemulation: {calibrate: false}\ntimeout: 5s\n" + body
	if err := os.WriteFile(exp, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	id := runid.New()
	t.Cleanup(func() { cleanup.Clean(context.Background(), id) })
	if msg, err := runCclab(t, "run", "--quiet", "--out", out, "--run", string(id), exp); err != nil {
		t.Fatalf("run: %v\n%s", err, msg)
	}
	return filepath.Join(out, string(id))
}

// cclab compare compares two laws over the same topology, workload and
// seed as it is; runs of another workload or topology only with --force,
// and then says so; a seed that drew the same flows is noted, not refused.
func TestCompareChecksRuns(t *testing.T) {
	out := t.TempDir()
	long := func(stop string) string {
		return "workload:\n  - name: l\n    long: {src: h1, dst: h0, stop: " + stop + "}\n"
	}
	a := realRun(t, out, "repro-star-2.yaml", "compare: [cubic, reno]\n"+long("100ms"))
	seed := realRun(t, out, "repro-star-2.yaml", "seed: 2\ncc: reno\n"+long("100ms"))
	work := realRun(t, out, "repro-star-2.yaml", "cc: reno\n"+long("150ms"))
	topo := realRun(t, out, "repro-star-4.yaml", "cc: reno\n"+long("100ms"))

	// The normal case: the same run's two laws.
	msg, err := run(t, "compare", filepath.Join(a, "cubic"), filepath.Join(a, "reno"))
	if err != nil || !strings.Contains(msg, "same topology (repro-star-2), workload (1 flows) and seed (1)") {
		t.Fatalf("compare of two laws of one run: %v\n%s", err, msg)
	}
	// Another seed that drew the same flows: compared, with a note.
	msg, err = run(t, "compare", filepath.Join(a, "cubic"), seed)
	if err != nil || !strings.Contains(msg, "seed: ") || !strings.Contains(msg, "the same flows") || strings.Contains(msg, "NOT LIKE FOR LIKE") {
		t.Fatalf("compare across seeds with the same flows: %v\n%s", err, msg)
	}
	// A compared run's directory against one run: each variant is checked.
	if msg, err := run(t, "compare", a, seed); err != nil {
		t.Fatalf("compare of a compared run's directory: %v\n%s", err, msg)
	}
	for what, dir := range map[string]string{"workload": work, "topology": topo} {
		_, err := run(t, "compare", filepath.Join(a, "cubic"), dir)
		if err == nil || !strings.Contains(err.Error(), "differ in "+what) || !strings.Contains(err.Error(), "--force") {
			t.Errorf("compare across another %s: %v", what, err)
			continue
		}
		msg, err := run(t, "compare", "--force", filepath.Join(a, "cubic"), dir)
		if err != nil || !strings.Contains(msg, "NOT LIKE FOR LIKE (--force): the runs differ in "+what) {
			t.Errorf("compare --force across another %s: %v\n%s", what, err, msg)
		}
		msg, err = run(t, "compare", "--force", "--json", filepath.Join(a, "cubic"), dir)
		var d struct {
			Rows  []json.RawMessage `json:"rows"`
			Check runCheck          `json:"check"`
		}
		if err != nil || json.Unmarshal([]byte(msg), &d) != nil {
			t.Fatalf("compare --force --json: %v\n%s", err, msg)
		}
		if !d.Check.Forced || d.Check.Comparable || !strings.Contains(strings.Join(d.Check.Differs, ","), what) || len(d.Rows) == 0 {
			t.Errorf("--json across another %s: %+v (%d rows)", what, d.Check, len(d.Rows))
		}
	}
}
