package report

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"cclab/analysis/metrics"
	"cclab/analysis/stats"
)

// runOf is an analysis of one run: law cc's flows i = 0..n-1 with the
// given slowdown; a NaN slowdown is a flow that did not complete.
func runOf(cc, verdict string, n int, size uint64, slow func(i int) float64) *Analysis {
	a := &Analysis{Fidelity: []Fidelity{{Variant: cc, Verdict: verdict}}}
	for i := range n {
		s := slow(i)
		a.Flows = append(a.Flows, Flow{ID: cc + "/" + strconv.Itoa(i), CC: cc, Size: size, Complete: !math.IsNaN(s), Slowdown: metrics.Num(s)})
	}
	a.ByCC = []CCTable{{CC: cc}}
	return a
}

// The headline table pools every run's flows per law: the percentile of
// the concatenation, with the order-statistic interval, a flow that did
// not complete sorting last, and "max of n" below the flows a percentile
// needs.
func TestHeadlinesPool(t *testing.T) {
	f1 := func(i int) float64 { return 1 + float64(i%37) }
	f2 := func(i int) float64 {
		if i == 5 {
			return math.NaN()
		}
		return 2 + float64(i%11)
	}
	// A degraded run is left out while the law has a faithful one.
	if rows := Headlines(runOf("a", "faithful", 150, 5000, f1), runOf("a", "degraded: x", 80, 5000, f2)); len(rows) != 1 || rows[0].Flows != 150 || rows[0].Runs != 1 {
		t.Errorf("degraded run pooled: %+v", rows)
	}
	if rows := Headlines(runOf("a", "degraded: y", 150, 5000, f1), runOf("a", "degraded: x", 80, 5000, f2)); len(rows) != 1 || rows[0].Flows != 230 || rows[0].Emulation != "2 of 2 runs degraded" {
		t.Errorf("only degraded runs: %+v", rows)
	}
	rows := Headlines(runOf("a", "faithful", 150, 5000, f1), runOf("a", "faithful", 80, 5000, f2))
	if len(rows) != 1 || rows[0].Runs != 2 || rows[0].Flows != 230 || rows[0].Complete != 229 || rows[0].Emulation != "faithful" {
		t.Fatalf("rows %+v", rows)
	}
	var pool []float64
	for i := range 150 {
		pool = append(pool, f1(i))
	}
	for i := range 80 {
		if i == 5 {
			pool = append(pool, math.Inf(1))
		} else {
			pool = append(pool, f2(i))
		}
	}
	slices.Sort(pool)
	for ci, c := range headlineCols {
		got := rows[0].Cells[ci]
		if c.class == "long" {
			if got.N != 0 {
				t.Errorf("%s: %d long flows", c.name, got.N)
			}
			continue
		}
		lo, hi := stats.PercentileRanks(len(pool), c.p, stats.Conf)
		if got.Est != metrics.Percentile(pool, c.p) || got.N != 230 || (lo >= 1 && got.CI.Lo != pool[lo-1]) || (hi <= len(pool) && got.CI.Hi != pool[hi-1]) ||
			got.CI.NoUpper != (hi > len(pool)) || got.CI.NoLower != (lo < 1) {
			t.Errorf("%s: %+v; want %v ranks %d-%d", c.name, got, metrics.Percentile(pool, c.p), lo, hi)
		}
		if want := c.p == 99.9; got.TooFew != want {
			t.Errorf("%s: too few %v", c.name, got.TooFew)
		}
	}
	if !strings.Contains(rows[0].Cells[3].cellText(), "max of 230") || !strings.Contains(rows[0].Cells[3].cellText(), "&infin;") {
		t.Errorf("p99.9 of 230 flows, one incomplete: %q", rows[0].Cells[3].cellText())
	}
	if _, err := json.Marshal(rows); err != nil {
		t.Errorf("json: %v", err)
	}
}

// A law's ratio to the baseline pairs the same flows of each run: b twice
// a flow by flow is exactly 0.5 in every resample.
func TestRatiosPaired(t *testing.T) {
	var as []*Analysis
	for r := range 3 {
		f := func(i int) float64 { return 1 + float64((i*7+r)%23) }
		a := runOf("a", "faithful", 120, 3000, f)
		b := runOf("b", "faithful", 120, 3000, func(i int) float64 { return 2 * f(i) })
		a.Flows = append(a.Flows, b.Flows...)
		a.ByCC = append(a.ByCC, b.ByCC...)
		as = append(as, a)
	}
	rows := Ratios(as, "b")
	if len(rows) != 1 || rows[0].CC != "a" {
		t.Fatalf("rows %+v", rows)
	}
	for i, c := range rows[0].Cells {
		if headlineCols[i].class == "long" {
			continue
		}
		if c.Est != 0.5 || c.CI.Lo != 0.5 || c.CI.Hi != 0.5 || c.N != 360 {
			t.Errorf("%s: %+v", headlineCols[i].name, c)
		}
	}
	cmp, err := Compare([]string{"r1", "r2", "r3"}, as, "b")
	if err != nil {
		t.Fatal(err)
	}
	page := cmp.HTML()
	h, r, each := bytes.Index(page, []byte(`<table class="headline">`)), bytes.Index(page, []byte(`<table class="ratios">`)), bytes.Index(page, []byte("Each run"))
	if h < 0 || r < h || each < r || bytes.Contains(page[:each], []byte("<pre>")) {
		t.Errorf("compare.html: the pooled table, then the ratios, then each run (%d %d %d)", h, r, each)
	}
	if !bytes.Contains(page, []byte("0.50 [0.50, 0.50] n=360")) {
		t.Errorf("compare.html lacks the ratio cell:\n%s", page)
	}
}

// The ratios are reproducible: the same runs give the same intervals
// (the pairs are drawn in flow order, not a map's).
func TestRatiosReproducible(t *testing.T) {
	var as []*Analysis
	for r := range 3 {
		a := runOf("a", "faithful", 90, 3000, func(i int) float64 { return 1 + float64((i*13+r*7)%29) })
		b := runOf("b", "faithful", 90, 3000, func(i int) float64 { return 1 + float64((i*5+r)%31) })
		a.Flows = append(a.Flows, b.Flows...)
		as = append(as, a)
	}
	first := Ratios(as, "b")
	for range 5 {
		again := Ratios(as, "b")
		for i := range first[0].Cells {
			if x, y := first[0].Cells[i], again[0].Cells[i]; x.N > 0 && (x.CI != y.CI || x.Est != y.Est) {
				t.Fatalf("column %d: %+v then %+v", i, x, y)
			}
		}
	}
}
