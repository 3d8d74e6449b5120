package report

import (
	"strings"
	"testing"

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
