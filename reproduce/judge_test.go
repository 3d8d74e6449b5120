package reproduce

import (
	"cclab/analysis/report"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"cclab/analysis/metrics"
	"cclab/analysis/stats"
)

func fp(x float64) *float64 { return &x }

// The bands: an improvement of X % agrees within [X/2, min(2X, 100)] %,
// a worsening within [X/2, 2X] %, a figure within a factor of 2 (one
// side for at_most and at_least, and a ratio on the paper's side of 1),
// a reading against its limit or direction.
func TestBands(t *testing.T) {
	ratio := func(p *float64, dir, kind string) ClaimSpec {
		return ClaimSpec{Paper: PaperNumber{Value: p}, Band: kind, Ratio: &RatioCheck{A: "a", B: "b", Metric: "m", Direction: dir}}
	}
	value := func(p *float64, bound, kind string, limit *float64) ClaimSpec {
		return ClaimSpec{Paper: PaperNumber{Value: p}, Band: kind, Value: &ValueCheck{CC: "a", Metric: "m", Bound: bound, Limit: limit}}
	}
	inf := math.Inf(1)
	for _, tc := range []struct {
		name           string
		c              ClaimSpec
		lo, hi         float64
		loOpen, hiOpen bool
	}{
		{"9 % better", ratio(fp(0.91), "below", "improvement"), 0.82, 0.955, false, false},
		{"80 % better", ratio(fp(0.2), "below", "improvement"), 0, 0.6, false, false},
		{"33 % better", ratio(fp(0.67), "below", "improvement"), 0.34, 0.835, false, false},
		{"60 % worse", ratio(fp(1.6), "above", "improvement"), 1.3, 2.2, false, false},
		{"ratio about 0.3", ratio(fp(0.3), "below", "factor2"), 0.15, 0.6, false, false},
		{"ratio about 0.4", ratio(fp(0.4), "below", "factor2"), 0.2, 0.8, false, false},
		{"ratio about 2.5", ratio(fp(2.5), "above", "factor2"), 1.25, 5, false, false},
		{"about 7", value(fp(7), "about", "factor2", nil), 3.5, 14, false, false},
		{"at most 7", value(fp(7), "at_most", "factor2", nil), -inf, 14, false, false},
		{"at least 350", value(fp(350), "at_least", "factor2", nil), 175, inf, false, false},
		{"limit at most 20", value(nil, "at_most", "limit", fp(20)), -inf, 20, false, false},
		{"limit at least 0.9", value(nil, "at_least", "limit", fp(0.9)), 0.9, inf, false, false},
		{"below", ratio(nil, "below", "direction"), -inf, 1, false, true},
		{"above", ratio(nil, "above", "direction"), 1, inf, true, false},
		{"80 to 85 %", ClaimSpec{Paper: PaperNumber{Value: fp(0.8), Upper: fp(0.85)}, Band: "range", Value: &ValueCheck{CC: "a", Metric: "m", Bound: "about"}}, 0.72, 0.935, false, false},
	} {
		b, err := tc.c.band()
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		near := func(a, b float64) bool { return a == b || math.Abs(a-b) < 1e-9 }
		if !near(b.lo, tc.lo) || !near(b.hi, tc.hi) || b.loOpen != tc.loOpen || b.hiOpen != tc.hiOpen {
			t.Errorf("%s: band %+v, want [%v, %v] open %v %v", tc.name, b, tc.lo, tc.hi, tc.loOpen, tc.hiOpen)
		}
	}
	// Within 2x of a ratio in [0.5, 2] is every ratio on its side of 1:
	// refused, the claim is an improvement's.
	for _, p := range []float64{0.5, 0.67, 0.91, 1.6, 2} {
		dir := "below"
		if p > 1 {
			dir = "above"
		}
		if _, err := ratio(fp(p), dir, "factor2").band(); err == nil || !strings.Contains(err.Error(), "use band improvement") {
			t.Errorf("factor2 on %v: %v", p, err)
		}
	}
	// A range needs both ends, the lower first.
	if _, err := (ClaimSpec{Paper: PaperNumber{Value: fp(0.85), Upper: fp(0.8)}, Band: "range", Value: &ValueCheck{CC: "a", Metric: "m"}}).band(); err == nil {
		t.Error("a range whose upper end is below its lower one was accepted")
	}
	// A 5 % improvement no longer passes for a paper's 33 %.
	b, _ := ratio(fp(0.67), "below", "improvement").band()
	if v := b.judge(stats.Interval{Lo: 0.93, Hi: 0.97}); v != Disagrees {
		t.Errorf("5 %% for 33 %%: %s", v)
	}
}

// An interval inside the band agrees, outside disagrees, across an edge
// is inconclusive; an open edge (a direction's 1) belongs outside.
func TestBandJudge(t *testing.T) {
	b := band{lo: 0.5, hi: 1, hiOpen: true}
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{0.6, 0.9, Agrees}, {0.5, 0.99, Agrees}, {0.6, 1, Inconclusive}, {0.4, 0.6, Inconclusive},
		{1, 1.2, Disagrees}, {0.1, 0.4, Disagrees}, {0.4, 1.1, Inconclusive}, {math.Inf(-1), math.Inf(1), Inconclusive},
	} {
		if got := b.judge(stats.Interval{Lo: tc.lo, Hi: tc.hi}); got != tc.want {
			t.Errorf("[%v, %v]: %s, want %s", tc.lo, tc.hi, got, tc.want)
		}
	}
}

// flowRun is a run whose variants have per-flow samples: flow i of a is
// f(i), of b g(i).
func flowRun(seed int64, n int, fidA string, f, g func(i int) float64) RunOutcome {
	var sa, sb []Sample
	for i := range n {
		id := strconv.Itoa(i)
		sa, sb = append(sa, Sample{Flow: id, V: f(i)}), append(sb, Sample{Flow: id, V: g(i)})
	}
	return RunOutcome{Seed: seed, Variants: []VariantOutcome{
		{CC: "a", Status: "ran", Fidelity: fidA, Samples: Samples{"short_slowdown": sa}},
		{CC: "b", Status: "ran", Fidelity: "faithful", Samples: Samples{"short_slowdown": sb}}}}
}

// mustMeasure is the analysis's measure of that name (the tests name
// existing ones).
func mustMeasure(name string) report.Measure {
	m, ok := report.LookupMeasure(name)
	if !ok {
		panic("no measure " + name)
	}
	return m
}

func fctExperiment(claims ...ClaimSpec) *Experiment {
	return &Experiment{Name: "x", Compare: []string{"a", "b"}, measure: mustMeasure("fct"), Spec: Spec{Claims: claims}}
}

// A percentile claim pools the flows of every faithful run: the number is
// the percentile of their concatenation, n counts them, its interval is
// the order-statistic one; a degraded run's flows are left out; below
// the claim's n the verdict is too few, whatever the number.
func TestPooledPercentileClaim(t *testing.T) {
	c := ClaimSpec{ID: "v", Statistic: "p90", N: 40, Band: "limit", Paper: PaperNumber{},
		Value: &ValueCheck{CC: "a", Metric: "short_slowdown", Bound: "at_most", Limit: fp(100)}}
	e := fctExperiment(c)
	lin := func(k float64) func(int) float64 { return func(i int) float64 { return 1 + k*float64(i) } }
	o := &Outcome{Runs: []RunOutcome{
		flowRun(1, 20, "faithful", lin(1), lin(2)),
		flowRun(2, 30, "degraded: CPU stolen", lin(100), lin(2)),
		flowRun(3, 25, "faithful", lin(0.5), lin(2)),
	}}
	judge(e, o)
	got := o.Claims[0]
	var pool []float64
	for _, r := range []RunOutcome{o.Runs[0], o.Runs[2]} {
		pool = append(pool, values(r.Variants[0].Samples["short_slowdown"])...)
	}
	slices.Sort(pool)
	want := metrics.Percentile(pool, 90)
	lo, hi := stats.PercentileRanks(len(pool), 90, stats.Conf)
	if float64(got.Value) != want || got.N != 45 || float64(got.CI[0]) != pool[lo-1] || (hi <= len(pool) && float64(got.CI[1]) != pool[hi-1]) {
		t.Errorf("pooled: %v [%v, %v] n %d; want %v ranks %d-%d of %d", got.Value, got.CI[0], got.CI[1], got.N, want, lo, hi, len(pool))
	}
	if got.Verdict != Agrees || len(got.Seeds) != 3 || got.Seeds[1].Faithful || got.Seeds[0].N != 20 {
		t.Errorf("verdict %s, seeds %+v", got.Verdict, got.Seeds)
	}
	e.Claims[0].N = 46
	judge(e, o)
	if v := o.Claims[0]; v.Verdict != TooFew || !strings.Contains(verdictCell(v), "n = 45 of 46") {
		t.Errorf("one flow short: %s", verdictCell(v))
	}
}

// A ratio of two laws' percentiles pairs their flows by id: b twice a
// flow by flow gives exactly 0.5 in every resample; a flow one law lacks
// is left out of both; a 50 % improvement agrees, a 9 % one disagrees.
func TestPairedRatioClaim(t *testing.T) {
	ratio := func(p float64) ClaimSpec {
		return ClaimSpec{ID: "r", Statistic: "p95", N: 20, Band: "improvement", Paper: PaperNumber{Value: fp(p)},
			Ratio: &RatioCheck{A: "a", B: "b", Metric: "short_slowdown", Direction: "below"}}
	}
	e := fctExperiment(ratio(0.5), ratio(0.91))
	f := func(i int) float64 { return 1 + float64(i*i%17) }
	o := &Outcome{Runs: []RunOutcome{
		flowRun(1, 30, "faithful", f, func(i int) float64 { return 2 * f(i) }),
		flowRun(2, 40, "faithful", f, func(i int) float64 { return 2 * f(i) }),
	}}
	// A flow only b has: not paired, not counted.
	o.Runs[1].Variants[1].Samples["short_slowdown"] = append(o.Runs[1].Variants[1].Samples["short_slowdown"], Sample{Flow: "extra", V: 1000})
	judge(e, o)
	c := o.Claims[0]
	if c.Value != 0.5 || c.CI != [2]Value{0.5, 0.5} || c.N != 70 || c.Verdict != Agrees {
		t.Errorf("paired: %v %v n %d %s", c.Value, c.CI, c.N, c.Verdict)
	}
	if c := o.Claims[1]; c.Verdict != Disagrees || !c.DirectionHolds || !strings.Contains(verdictCell(c), "direction holds") {
		t.Errorf("9 %% claim on a 50 %% improvement: %s", verdictCell(c))
	}
}

// A time that never came is censored: the median over runs is Kaplan-
// Meier's, with too few runs for a 95 % interval below six.
func TestCensoredMedianClaim(t *testing.T) {
	c := ClaimSpec{ID: "t", Statistic: "median", N: 6, Band: "factor2", Paper: PaperNumber{Value: fp(350)},
		Value: &ValueCheck{CC: "a", Metric: "recovery_rtts", Bound: "at_least"}}
	e := &Experiment{Name: "x", Compare: []string{"a"}, measure: mustMeasure("recovery"), Spec: Spec{Claims: []ClaimSpec{c}}}
	run := func(seed int64, x float64) RunOutcome {
		return RunOutcome{Seed: seed, Variants: []VariantOutcome{{CC: "a", Status: "ran", Fidelity: "faithful", Metrics: Metrics{"recovery_rtts": x}}}}
	}
	never := math.Inf(1)
	o := &Outcome{Runs: []RunOutcome{run(1, 400), run(2, never), run(3, never), run(4, 500), run(5, never), run(6, never)}}
	judge(e, o)
	got := o.Claims[0]
	// KM: 6 at risk, events at 400 (S = 5/6) and 500 (S = 4/6); never
	// below 0.5: not reached. Ranks (1, 6) of [400 500 inf inf inf inf].
	if !math.IsInf(float64(got.Value), 1) || got.CI != [2]Value{400, Value(never)} || got.Verdict != Agrees || got.N != 6 {
		t.Errorf("censored: %v %v %s n %d", got.Value, got.CI, got.Verdict, got.N)
	}
	o.Runs = o.Runs[:3]
	judge(e, o)
	if got := o.Claims[0]; got.Verdict != TooFew || got.N != 3 {
		t.Errorf("three runs: %s n %d", got.Verdict, got.N)
	}
}

// A ratio of per-run means is the geometric mean of the runs' ratios,
// its interval Student's t on their logarithms; a claim the file marks
// not measurable here is shown and not judged; a run with a failed
// variant is not counted and says why.
func TestMeanRatioClaim(t *testing.T) {
	c := ClaimSpec{ID: "q", Statistic: "mean", N: 3, Band: "direction", Paper: PaperNumber{},
		Ratio: &RatioCheck{A: "a", B: "b", Metric: "queue_peak", Direction: "below"}}
	nm := c
	nm.ID, nm.NotMeasurable = "nm", "the buffer decides"
	e := &Experiment{Name: "x", Compare: []string{"a", "b"}, measure: mustMeasure("queue"), Spec: Spec{Claims: []ClaimSpec{c, nm}}}
	run := func(seed int64, qa, qb float64) RunOutcome {
		return RunOutcome{Seed: seed, Variants: []VariantOutcome{
			{CC: "a", Status: "ran", Fidelity: "faithful", Metrics: Metrics{"queue_peak": qa}},
			{CC: "b", Status: "ran", Fidelity: "faithful", Metrics: Metrics{"queue_peak": qb}}}}
	}
	failed := RunOutcome{Seed: 9, Variants: []VariantOutcome{{CC: "a", Status: "failed", Reason: "boom"}}}
	o := &Outcome{Runs: []RunOutcome{run(1, 20, 100), run(2, 40, 100), run(3, 80, 100), failed}}
	judge(e, o)
	got := o.Claims[0]
	gm := math.Cbrt(0.2 * 0.4 * 0.8)
	if math.Abs(float64(got.Value)-gm) > 1e-12 || got.N != 3 || !strings.Contains(got.Reason, "boom") {
		t.Errorf("geometric mean %v (want %v) n %d reason %q", got.Value, gm, got.N, got.Reason)
	}
	// logs -1.609, -0.916, -0.223: mean -0.916, sd 0.693, t(2) 4.303:
	// half-width 1.722, so the interval reaches above 1: inconclusive.
	if float64(got.CI[1]) < 1 || got.Verdict != Inconclusive {
		t.Errorf("interval %v: %s", got.CI, got.Verdict)
	}
	if c := o.Claims[1]; c.Verdict != NotMeasurableHere || c.Reason != "the buffer decides" || math.IsNaN(float64(c.Value)) {
		t.Errorf("not measurable: %+v", c)
	}
}

// --page-only judges the stored runs again against the experiment files:
// a paper number edited in the file changes the verdict without a run,
// the per-flow samples survive the store, and the page shows the note.
func TestRejudgeStore(t *testing.T) {
	c := ClaimSpec{ID: "ratio", Statistic: "p95", N: 20, Band: "improvement", Paper: PaperNumber{Value: fp(0.5), Where: "1", Quote: "q"},
		Ratio: &RatioCheck{A: "a", B: "b", Metric: "short_slowdown", Direction: "below"}}
	e := fctExperiment(c)
	f := func(i int) float64 { return 1 + float64(i) }
	o := &Outcome{Name: "x", Title: "x", Runs: []RunOutcome{flowRun(1, 200, "faithful", f, func(i int) float64 { return 2 * f(i) })}}
	o.Runs[0].Variants[0].Samples["short_slowdown"][3].V = math.Inf(1) // a flow that did not complete
	o.Runs[0].Variants[1].Samples["short_slowdown"][3].V = math.Inf(1)
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
	e.Claims[0].Paper.Value = fp(0.91)
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
	s := store["x"]
	if c := s.Claims[0]; c.Verdict != Disagrees || c.Note != "the paper's setup differs" || c.N != 200 {
		t.Errorf("after: %s n %d, note %q", c.Verdict, c.N, c.Note)
	}
	if got := s.Runs[0].Variants[0].Samples["short_slowdown"]; len(got) != 200 || !math.IsInf(got[3].V, 1) || got[7].Flow != "7" {
		t.Errorf("samples after the store: %v", got[:8])
	}
	page, err := os.ReadFile(filepath.Join(docs, ResultsPage))
	for _, want := range []string{"the paper's setup differs", "p95 0.50 [0.50, 0.50], n = 200", "With the paper's own number (1): 0 agree, 1 disagrees"} {
		if err != nil || !strings.Contains(string(page), want) {
			t.Errorf("page lacks %q: %v\n%s", want, err, page)
		}
	}
}
