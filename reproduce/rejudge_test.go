package reproduce

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A tail-percentile claim says when its runs had too few flows for the
// percentile (p99.9 of fewer than 1000 is the slowest flow), and says
// nothing when they had enough or the claim reads another metric.
func TestSampleNote(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	e := &Experiment{Name: "x", Compare: []string{"a", "b"}, measure: measures["fct"], Spec: Spec{Claims: []ClaimSpec{
		{ID: "tail", Paper: PaperNumber{Value: f(0.9)}, Ratio: &RatioCheck{A: "a", B: "b", Metric: "short_p999", Direction: "below"}},
		{ID: "all", Paper: PaperNumber{Value: f(0.9)}, Ratio: &RatioCheck{A: "a", B: "b", Metric: "all_p99", Direction: "below"}},
	}}}
	run := func(seed int64, na, nb float64) RunOutcome {
		return RunOutcome{Seed: seed, Variants: []VariantOutcome{
			{CC: "a", Status: "ran", Fidelity: "faithful", Metrics: Metrics{"short_p999": 2, "short_n": na, "all_p99": 3}},
			{CC: "b", Status: "ran", Fidelity: "faithful", Metrics: Metrics{"short_p999": 4, "short_n": nb, "all_p99": 5}}}}
	}
	o := &Outcome{Runs: []RunOutcome{run(1, 9, 12), run(2, 14, 10)}}
	judge(e, o)
	if s := o.Claims[0].Samples; !strings.Contains(s, "short_p999 is taken over 9-14 flows") || !strings.Contains(s, "below 1000") {
		t.Errorf("few flows: %q", s)
	}
	if s := o.Claims[1].Samples; s != "" {
		t.Errorf("all_p99 claim: %q", s)
	}
	o = &Outcome{Runs: []RunOutcome{run(1, 1200, 1500)}}
	judge(e, o)
	if s := o.Claims[0].Samples; s != "" {
		t.Errorf("enough flows: %q", s)
	}
}

// --page-only judges the stored runs again against the experiment files:
// a paper number edited in the file changes the verdict without a run,
// and the page shows the new note.
func TestRejudgeStore(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	e := &Experiment{Name: "x", Compare: []string{"a", "b"}, measure: measures["queue"], Spec: Spec{Claims: []ClaimSpec{
		{ID: "ratio", Paper: PaperNumber{Value: f(0.5), Where: "1", Quote: "q"}, Ratio: &RatioCheck{A: "a", B: "b", Metric: "queue_peak", Direction: "below"}},
	}}}
	o := &Outcome{Name: "x", Title: "x", Runs: []RunOutcome{{Seed: 1, Variants: []VariantOutcome{
		{CC: "a", Status: "ran", Fidelity: "faithful", Metrics: Metrics{"queue_peak": 40}},
		{CC: "b", Status: "ran", Fidelity: "faithful", Metrics: Metrics{"queue_peak": 100}}}}}}
	judge(e, o)
	if v := o.Claims[0].Verdict; v != Agrees {
		t.Fatalf("before: %s", v)
	}
	docs := t.TempDir()
	if err := os.MkdirAll(filepath.Join(docs, ResultsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeStore(docs, map[string]*Outcome{"x": o}); err != nil {
		t.Fatal(err)
	}
	e.Claims[0].Paper.Value = f(0.1)
	e.Claims[0].Note = "the paper's setup differs"
	n, err := Rejudge([]*Experiment{e}, docs)
	if err != nil || n != 1 {
		t.Fatalf("rejudge: %d, %v", n, err)
	}
	if err := Publish(nil, docs); err != nil {
		t.Fatal(err)
	}
	store, err := readStore(docs)
	if err != nil {
		t.Fatal(err)
	}
	if c := store["x"].Claims[0]; c.Verdict != Magnitude || c.Note != "the paper's setup differs" {
		t.Errorf("after: %s, note %q", c.Verdict, c.Note)
	}
	page, err := os.ReadFile(filepath.Join(docs, ResultsPage))
	if err != nil || !strings.Contains(string(page), "the paper's setup differs") {
		t.Errorf("page: %v\n%s", err, page)
	}
}
