package report

import (
	"context"
	"strings"
	"testing"
	"time"

	"cclab/analysis/metrics"
)

// The first screen's table marks the best law of each column, among the
// faithful variants only: a degraded variant's better number is not a
// result.
func TestHeadlineTableMarksBestFaithful(t *testing.T) {
	row := func(cc string, p50 float64) CCTable {
		s := metrics.Summary{P50: metrics.Num(p50), P99: metrics.Num(2 * p50), P999: metrics.Num(3 * p50)}
		return CCTable{CC: cc, Flows: 10, Complete: 10, Slowdown: metrics.ShortLong{All: s, Short: s, Long: s}}
	}
	a := &Analysis{
		ByCC:     []CCTable{row("degr", 1.1), row("good", 1.5), row("ok", 2.0)},
		Fidelity: []Fidelity{{Variant: "degr", Verdict: "degraded"}, {Variant: "good", Verdict: "faithful"}, {Variant: "ok", Verdict: "faithful"}},
	}
	lines := a.headlineTable()
	text := strings.Join(lines, "\n")
	var good, degr string
	for _, l := range lines {
		switch {
		case strings.Contains(l, " good "):
			good = l
		case strings.Contains(l, " degr "):
			degr = l
		}
	}
	if strings.Count(good, "*") != 5 || strings.Contains(degr, "*") || !strings.Contains(text, "among faithful variants") {
		t.Errorf("best marks wrong:\n%s", text)
	}
	// Without verdicts (captures alone) the best of all is marked.
	a.Fidelity = nil
	for _, l := range a.headlineTable() {
		if strings.Contains(l, " degr ") && strings.Count(l, "*") != 5 {
			t.Errorf("no verdicts: the best row is not marked: %q", l)
		}
	}
}

// The comparison figures draw one line per law, each law in the same
// colour in every figure, and are written with the report.
func TestComparisonFigures(t *testing.T) {
	dir, _ := makeRun(t, twoLawsThreeFlows())
	a, err := AnalyzeRun(context.Background(), dir, Config{Window: 100 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	charts := a.comparisonCharts()
	if len(charts) != len(comparisonNames) {
		t.Fatalf("%d comparison charts, %d names", len(charts), len(comparisonNames))
	}
	color := map[string]int{}
	for ci, c := range charts[:5] { // the four slowdown-per-bin figures and the FCT CDF
		if len(c.Series) != len(a.ByCC) {
			t.Errorf("%s: %d lines, want one per law (%d)", comparisonNames[ci], len(c.Series), len(a.ByCC))
		}
		for _, s := range c.Series {
			if prev, ok := color[s.Name]; ok && prev != s.Color {
				t.Errorf("%s: law %s in colour %d, elsewhere %d", comparisonNames[ci], s.Name, s.Color, prev)
			}
			color[s.Name] = s.Color
			if len(s.X) == 0 {
				t.Errorf("%s: law %s has no points", comparisonNames[ci], s.Name)
			}
		}
	}
	figs, err := a.Figures()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range figs {
		names[f.Name] = true
	}
	for _, n := range []string{"slowdown_p50_bins", "slowdown_p99_bins", "fct_cdf"} {
		if !names[n] {
			t.Errorf("figure %s not written (have %v)", n, names)
		}
	}
}

// twoLawsThreeFlows is a small run of two laws (lawA, lawB) for the
// report's tests: two long flows and a short one into h2.
func twoLawsThreeFlows() []runFlow {
	return []runFlow{
		{id: "f0", src: h0, dst: h2, srcName: "h0", sport: 40000, size: 200_000, gap: 24 * time.Microsecond},
		{id: "f1", src: h1, dst: h2, srcName: "h1", sport: 40001, size: 200_000, gap: 24 * time.Microsecond},
		{id: "f2", src: h0, dst: h2, srcName: "h0", sport: 40002, size: 4_000, gap: 10 * time.Microsecond, start: 5 * time.Millisecond},
	}
}
