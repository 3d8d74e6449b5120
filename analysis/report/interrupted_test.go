package report

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A run that a signal interrupted is refused unless Partial; analysed
// with it, the summary, report.html's top, summary.json and both kinds of
// comparison say so.
func TestInterruptedRunIsRefusedOrFlagged(t *testing.T) {
	dir, _ := makeRun(t, []runFlow{{id: "f0", src: h0, dst: h2, srcName: "h0", sport: 40000, size: 20_000, gap: 24 * time.Microsecond}})
	var rj map[string]any
	b, _ := os.ReadFile(filepath.Join(dir, "run.json"))
	json.Unmarshal(b, &rj)
	rj["interrupted"] = map[string]string{"signal": "SIGHUP", "at": "2026-11-28T10:00:00Z", "cause": "interrupted by SIGHUP"}
	rj["fidelity"] = map[string]any{"verdict": "interrupted", "reasons": []string{"interrupted by SIGHUP at 2026-11-28T10:00:00Z"}}
	b, _ = json.Marshal(rj)
	os.WriteFile(filepath.Join(dir, "run.json"), b, 0o644)

	if _, err := Analyze(context.Background(), dir, Config{}); !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "SIGHUP") {
		t.Fatalf("interrupted run analysed without Partial: %v", err)
	}
	a, err := Analyze(context.Background(), dir, Config{Partial: true})
	if err != nil {
		t.Fatal(err)
	}
	if l := a.SummaryLines(); !strings.HasPrefix(l[0], "INTERRUPTED: ") || !strings.Contains(l[0], "SIGHUP") ||
		!strings.Contains(strings.Join(l, "\n"), "emulation: INTERRUPTED in 1 of 1") {
		t.Fatalf("summary:\n%s", strings.Join(l, "\n"))
	}
	page := string(a.HTML(nil))
	alert, headline := strings.Index(page, "INTERRUPTED: "), strings.Index(page, "<table")
	if alert < 0 || (headline >= 0 && alert > headline) {
		t.Fatalf("report.html does not open with the interruption (at %d, first table at %d)", alert, headline)
	}
	out := t.TempDir()
	if _, err := Write(a, out); err != nil {
		t.Fatal(err)
	}
	back, err := LoadSummary(filepath.Dir(out + "/"))
	if err != nil || len(back.Interrupted) != 1 || back.Interrupted[0].Signal != "SIGHUP" {
		t.Fatalf("summary.json: %v %+v", err, back)
	}
	if d := CompareTwo("a", a, "b", a); len(d.Partial) != 2 || !strings.HasPrefix(d.Partial[0], "A: INTERRUPTED") {
		t.Fatalf("compare: partial %q", d.Partial)
	}
	c, err := Compare([]string{"r1"}, []*Analysis{a}, "")
	if err != nil || len(c.Partial) != 1 || !strings.Contains(string(c.Markdown()), "INTERRUPTED") || !strings.Contains(string(c.HTML()), "INTERRUPTED") {
		t.Fatalf("comparison: %v, partial %q", err, c.Partial)
	}
}
