package report

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// setSource puts an experiment file's text into a run's run.json, as the
// runner records it.
func setSource(t *testing.T, dir, source string) {
	t.Helper()
	setRunJSON(t, dir, "experiment", map[string]any{"name": "x", "source": source})
}

// setRunJSON sets one top-level key of a run's run.json.
func setRunJSON(t *testing.T, dir, key string, value any) {
	t.Helper()
	p := filepath.Join(dir, "run.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var rj map[string]any
	if err := json.Unmarshal(b, &rj); err != nil {
		t.Fatal(err)
	}
	rj[key] = value
	if b, err = json.Marshal(rj); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The analysis takes the measures the reproduction suite judges: the one
// the experiment's `reproduce:` block names, on its group, or else every
// one that applies; summary.json, measures.csv and the summary carry
// them. The fixture's numbers are known: one flow under 10 KB, one of
// 100 KB-1 MB, none failed; the queue at s0 towards h2 peaks at 27 000
// bytes; h0's 1 Gbit/s link is the rate.
func TestMeasuresInTheAnalysis(t *testing.T) {
	dir, _ := makeRun(t, []runFlow{
		{id: "f0", src: h0, dst: h2, srcName: "h0", sport: 40000, size: 5_000, gap: 24 * time.Microsecond},
		{id: "f1", src: h1, dst: h2, srcName: "h1", sport: 40001, size: 200_000, gap: 24 * time.Microsecond},
	})
	cfg := Config{Window: 100 * time.Microsecond}
	a, err := AnalyzeRun(context.Background(), dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Measured{}
	for _, m := range a.Measures {
		got[m.Measure] = m
	}
	fct, ok := got["fct"]
	if !ok {
		t.Fatalf("no fct measure among %v", a.Measures)
	}
	if fct.Metrics["short_n"] != 1 || fct.Metrics["medium_n"] != 1 || fct.Metrics["failed"] != 0 || fct.RateBps != 1e9 {
		t.Errorf("fct measure %+v", fct)
	}
	if n := len(fct.Samples["all_slowdown"]); n != 2 {
		t.Errorf("%d per-flow slowdowns, want 2", n)
	}
	if q, ok := got["queue"]; !ok || q.Metrics["queue_peak"] != 27_000 {
		t.Errorf("queue measure %+v, want queue_peak 27000", q)
	}
	if _, ok := got["recovery"]; ok {
		t.Errorf("recovery taken on a run with no short and long groups: %+v", got["recovery"])
	}

	// The experiment's reproduce block picks one measure and its group.
	setSource(t, dir, "name: x\nreproduce:\n  measure: queue\n  group: test\n")
	if a, err = AnalyzeRun(context.Background(), dir, cfg); err != nil {
		t.Fatal(err)
	}
	if len(a.Measures) != 1 || a.Measures[0].Measure != "queue" || a.Measures[0].Group != "test" || a.Measures[0].Metrics["queue_peak"] != 27_000 {
		t.Fatalf("measures %+v, want queue of group test", a.Measures)
	}
	out := t.TempDir()
	if _, err := Write(a, out); err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Measures []struct {
			Measure string             `json:"measure"`
			Metrics map[string]float64 `json:"metrics"`
		} `json:"measures"`
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Measures) != 1 || sum.Measures[0].Metrics["queue_peak"] != 27_000 {
		t.Errorf("summary.json measures %+v", sum.Measures)
	}
	csv, err := os.ReadFile(filepath.Join(out, "measures.csv"))
	if err != nil || !strings.Contains(string(csv), "queue_peak,27.0,KB") {
		t.Errorf("measures.csv: %v\n%s", err, csv)
	}
	if !strings.Contains(strings.Join(a.SummaryLines(), "\n"), "measure queue of test") {
		t.Errorf("the summary does not show the measure:\n%s", strings.Join(a.SummaryLines(), "\n"))
	}

	// A measure the caller names that does not exist is an error; one
	// an edited run.json names is a warning, and the others are taken.
	if _, err := AnalyzeRun(context.Background(), dir, Config{Measure: "nosuch"}); err == nil || !strings.Contains(err.Error(), `"nosuch"`) {
		t.Errorf("unknown measure: %v", err)
	}
	setSource(t, dir, "name: x\nreproduce:\n  measure: nosuch\n")
	if a, err = AnalyzeRun(context.Background(), dir, cfg); err != nil {
		t.Fatal(err)
	}
	if len(a.Measures) < 2 || !strings.Contains(strings.Join(a.Warnings, "\n"), `"nosuch"`) {
		t.Errorf("measures %d, warnings %q", len(a.Measures), a.Warnings)
	}
}
