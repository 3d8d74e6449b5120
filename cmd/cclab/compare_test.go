package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cclab/analysis/metrics"
	"cclab/analysis/report"
)

// cclab compare reads two runs' analyses and gives each law's metrics in
// both with B - A and B / A - 1; a law in one run only has no difference.
func TestCompareTwoRuns(t *testing.T) {
	write := func(p50 map[string]float64, verdict string) string {
		dir := t.TempDir()
		a := report.Analysis{Version: report.AnalysisVersion}
		for cc, v := range p50 {
			s := metrics.Summary{P50: metrics.Num(v), P99: metrics.Num(2 * v), P999: metrics.Num(3 * v)}
			a.ByCC = append(a.ByCC, report.CCTable{CC: cc, Slowdown: metrics.ShortLong{All: s, Short: s, Long: s}})
			a.Fidelity = append(a.Fidelity, report.Fidelity{Variant: cc, Verdict: verdict})
		}
		os.MkdirAll(filepath.Join(dir, "analysis"), 0o755)
		b, _ := json.Marshal(a)
		os.WriteFile(filepath.Join(dir, "analysis", "summary.json"), b, 0o644)
		return dir
	}
	ra := write(map[string]float64{"hpcc": 2.0}, "faithful")
	rb := write(map[string]float64{"hpcc": 1.5, "swift": 1.2}, "degraded")
	// Analyses alone (no run.json) cannot be checked: only with --force.
	if out, err := runCclab(t, "compare", "--json", ra, rb); err == nil || !strings.Contains(err.Error(), "differ in unknown") {
		t.Fatalf("compare of analyses without run.json: %v\n%s", err, out)
	}
	out, err := run(t, "compare", "--json", "--force", ra, rb)
	if err != nil {
		t.Fatalf("compare: %v\n%s", err, out)
	}
	var d struct {
		report.Delta
		Check runCheck `json:"check"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !d.Check.Forced || d.Check.Comparable || strings.Join(d.Check.Differs, ",") != "unknown" {
		t.Errorf("check of analyses without run.json: %+v", d.Check)
	}
	var hp50, sw50 *report.DeltaRow
	for i, r := range d.Rows {
		if r.Metric == "p50 slowdown, all flows" {
			switch r.Law {
			case "hpcc":
				hp50 = &d.Rows[i]
			case "swift":
				sw50 = &d.Rows[i]
			}
		}
	}
	if hp50 == nil || hp50.A != 2.0 || hp50.B != 1.5 || hp50.Diff != -0.5 || hp50.Rel != -0.25 ||
		hp50.VerdictA != "faithful" || hp50.VerdictB != "degraded" {
		t.Errorf("hpcc p50: %+v", hp50)
	}
	if sw50 == nil || !math.IsNaN(sw50.A.F()) || sw50.B != 1.2 || !math.IsNaN(sw50.Diff.F()) {
		t.Errorf("swift p50 (B only): %+v", sw50)
	}
	if _, err := runCclab(t, "compare", "--force", ra, t.TempDir()); err == nil {
		t.Error("compare with a directory that is neither a run nor an analysis succeeded")
	}
	// A summary of other definitions is not compared as it is: with no run
	// to analyse again, the comparison fails.
	old := write(map[string]float64{"hpcc": 2.0}, "faithful")
	b, _ := os.ReadFile(filepath.Join(old, "analysis", "summary.json"))
	b = []byte(strings.Replace(string(b), fmt.Sprintf(`"analysis_version":%d`, report.AnalysisVersion), `"analysis_version":1`, 1))
	os.WriteFile(filepath.Join(old, "analysis", "summary.json"), b, 0o644)
	if _, err := runCclab(t, "compare", "--force", old, rb); err == nil {
		t.Error("compare used a summary of another analysis version")
	}
}
