package reproduce

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The results page reads verdicts first: the summary, then per experiment
// its claims' verdicts (numbered as in the summary) before its runs, and
// every claim's quote, check and per-seed numbers only under "Claim
// details", where the summary's links land. The health table is a page of
// its own (docs/results/health.md): a hand-written reproduction.md beside
// it is neither needed nor touched, and regenerating from the store
// rewrites both pages byte for byte.
func TestPageLayout(t *testing.T) {
	f := func(i int) float64 { return 1 + float64(i) }
	var outs []*Outcome
	for i, name := range []string{"first", "second"} {
		c := ClaimSpec{ID: "ratio" + name, Claim: "claim of " + name, Statistic: "p95", N: 20, Band: "improvement", Note: "note of " + name,
			Paper: PaperNumber{Value: fp(0.5), Where: "4.2", Quote: "quoted words of " + name},
			Ratio: &RatioCheck{A: "a", B: "b", Metric: "short_slowdown", Direction: "below"}}
		e := fctExperiment(c)
		e.Name = name
		o := &Outcome{Name: name, Title: "title of " + name, Order: i + 1, Runs: []RunOutcome{flowRun(1, 200, "faithful", f, func(i int) float64 { return 2 * f(i) })}}
		o.Runs[0].RunID = "run" + name
		o.Runs[0].Variants[0].Health = &Health{Flows: 200, RTTMedianNs: 4_161_000, RTTP99Ns: 4_745_000, LoadedLinks: 3, MinPeakRatio: 0.59}
		judge(e, o)
		outs = append(outs, o)
	}
	docs := t.TempDir()
	hand := []byte("# written by hand\n")
	if err := os.WriteFile(filepath.Join(docs, "reproduction.md"), hand, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Publish(outs, docs); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(docs, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	page, health := read(ResultsPage), read(filepath.Join(ResultsDir, HealthFile))

	at := func(s string) int {
		i := strings.Index(page, s)
		if i < 0 {
			t.Fatalf("results page lacks %q:\n%s", s, page)
		}
		if strings.Count(page, s) != 1 {
			t.Errorf("results page has %q %d times", s, strings.Count(page, s))
		}
		return i
	}
	// The verdict in the experiment's table is the summary's, number for number.
	c1, c2 := outs[0].Claims[0], outs[1].Claims[0]
	if want := "a/b 0.50 | p95 0.50 [0.50, 0.50], n = 200 | agrees"; judgedCells(c1) != want {
		t.Fatalf("claim cells %q, want %q", judgedCells(c1), want)
	}
	summary := at("| 1 | [first](#first-ratiofirst) claim of first | " + judgedCells(c1) + " |\n")
	firstTable := at("| 1 | [ratiofirst](#first-ratiofirst): claim of first | " + judgedCells(c1) + " |\n")
	firstSeed := at("### Seed 1 (run runfirst, ``)\n\nFidelity:\n\n- a: faithful")
	secondTable := at("| 2 | [ratiosecond](#second-ratiosecond): claim of second | " + judgedCells(c2) + " |\n")
	details := at("## Claim details")
	firstDetail := at("<a id=\"first-ratiofirst\"></a>")
	secondDetail := at("<a id=\"second-ratiosecond\"></a>")
	if !(summary < firstTable && firstTable < firstSeed && firstSeed < secondTable && secondTable < details &&
		details < firstDetail && firstDetail < secondDetail) {
		t.Errorf("order: summary %d, first's verdicts %d, its runs %d, second's verdicts %d, details %d, first's detail %d, second's %d",
			summary, firstTable, firstSeed, secondTable, details, firstDetail, secondDetail)
	}
	for _, name := range []string{"first", "second"} {
		for _, s := range []string{"quoted words of " + name, "note of " + name, "- Each run alone: seed 1: 0.50 (n = 200)."} {
			if i := strings.LastIndex(page, s); i < details {
				t.Errorf("%q is not under the claim details (at %d, details at %d)", s, i, details)
			}
		}
	}
	for _, s := range []string{"# Emulation health", "| first | 1 | a | faithful | 200 (0) | 0.0 | 4161 / 4745 | 0 % | 3, 0.59 | 0 | - |", "| second | 1 | b | | ran |"} {
		if !strings.Contains(health, s) {
			t.Errorf("health page lacks %q:\n%s", s, health)
		}
	}
	if strings.Contains(page, "| first | 1 | a |") {
		t.Errorf("the results page holds the health table")
	}
	if got := read("reproduction.md"); got != string(hand) {
		t.Errorf("the hand-written reproduction.md changed:\n%s", got)
	}

	if err := Publish(nil, docs); err != nil {
		t.Fatal(err)
	}
	if again := read(ResultsPage); !bytes.Equal([]byte(again), []byte(page)) {
		t.Errorf("results page regenerated from the store differs")
	}
	if again := read(filepath.Join(ResultsDir, HealthFile)); again != health {
		t.Errorf("health page regenerated from the store differs:\n%s\n---\n%s", health, again)
	}
}
