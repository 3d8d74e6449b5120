package envelope

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cclab/internal/runid"
	"cclab/orchestrator/cleanup"
)

func writeExp(t *testing.T, body string) string {
	t.Helper()
	topo, err := filepath.Abs("../../topologies/repro-star-8-1ms.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "exp.yaml")
	if err := os.WriteFile(p, []byte("name: env\ntopology: "+topo+"\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// An incast envelope on a real star: each value runs, every variant keeps
// its verdict and CPU checks with their bounds, the fan-in the file got is
// the one asked for, and the files and figures are written.
func TestEnvelopeIncast(t *testing.T) {
	exp := writeExp(t, `seed: 1
timeout: 10s
workload:
  - name: incast
    incast: {dst: h0, fan_in: 2, size: 256KB, start: 10ms}
`)
	out := t.TempDir()
	env, err := Measure(context.Background(), Options{File: exp, Knob: FanIn, Values: []float64{2, 6}, Runs: 1, Seed: 4, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(env.Runs) != 2 || len(env.Sums) != 2 {
		t.Fatalf("%d runs, %d values", len(env.Runs), len(env.Sums))
	}
	for i, r := range env.Runs {
		id, err := runid.Parse(r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if left, err := cleanup.Remains(id); err != nil || len(left) > 0 {
			t.Errorf("run %s left %v (%v)", id, left, err)
		}
		if r.Seed != 4 || len(r.Variants) != 1 {
			t.Fatalf("run %d: %+v", i, r)
		}
		v := r.Variants[0]
		if v.CPUQueueBound <= 0 || v.SaturatedBound <= 0 || v.LateBound <= 0 {
			t.Errorf("run %d: bounds missing: %+v", i, v)
		}
		rows, err := os.ReadFile(filepath.Join(v.Dir, "flows.csv"))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(rows), "\n") - 1; n != int(r.Value) {
			t.Errorf("fan_in %v ran %d flows", r.Value, n)
		}
	}
	if err := env.Write(out); err != nil {
		t.Fatal(err)
	}
	back, err := Read(filepath.Join(out, JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	if back.HasEdge != env.HasEdge || back.Edge != env.Edge || len(back.Sums) != 2 {
		t.Errorf("read back %+v, wrote %+v", back.Sums, env.Sums)
	}
	figs, err := Figures(out, "test", []Labeled{{"a", env}, {"b", back}})
	if err != nil || len(figs) != 2 {
		t.Fatalf("figures %v: %v", figs, err)
	}
	for _, f := range figs {
		if b, err := os.ReadFile(f); err != nil || !strings.Contains(string(b), "<svg") {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// The edge is the highest value up to which every run was faithful.
func TestEdge(t *testing.T) {
	run := func(v float64, ok ...bool) Run {
		r := Run{Value: v}
		for _, o := range ok {
			r.Variants = append(r.Variants, Variant{Faithful: o})
		}
		return r
	}
	e := (&Envelope{Runs: []Run{run(20, true, true), run(20, true), run(30, true), run(30, true, false), run(40, true)}}).finish()
	if !e.HasEdge || e.Edge != 20 {
		t.Errorf("edge %v %v, want 20", e.HasEdge, e.Edge)
	}
	if e.Sums[1].Faithful != 1 || e.Sums[1].Runs != 2 {
		t.Errorf("30: %+v", e.Sums[1])
	}
	e = (&Envelope{Runs: []Run{run(20, false)}}).finish()
	if e.HasEdge {
		t.Error("an edge below every value")
	}
}

// A file without an entry of the knob's kind, or a value the experiment
// refuses, fails before anything is built.
func TestRefusesBeforeRunning(t *testing.T) {
	exp := writeExp(t, "workload:\n  - name: l\n    long: {src: h1, dst: h0, stop: 1s}\n")
	out := t.TempDir()
	if _, err := Measure(context.Background(), Options{File: exp, Knob: Load, Values: []float64{20}, Runs: 1, Out: out}); err == nil || !strings.Contains(err.Error(), "no poisson entry") {
		t.Errorf("no poisson entry: %v", err)
	}
	exp = writeExp(t, "workload:\n  - name: i\n    incast: {dst: h0, fan_in: 2, size: 1KB, start: 0}\n")
	if _, err := Measure(context.Background(), Options{File: exp, Knob: FanIn, Values: []float64{2, 0}, Runs: 1, Out: out}); err == nil {
		t.Error("an incast of no sender ran")
	}
	if ents, _ := os.ReadDir(filepath.Join(out, "runs")); len(ents) > 0 {
		t.Errorf("runs made: %v", ents)
	}
}
