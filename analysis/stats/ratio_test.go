package stats

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"cclab/analysis/metrics"
)

func pct(p float64) func([]float64) float64 {
	return func(s []float64) float64 { return metrics.Percentile(s, p) }
}

// expSeeds is seeds of exponential "slowdowns" with a few missing units.
func expSeeds(r *rand.Rand, sizes ...int) []Paired {
	var seeds []Paired
	for _, n := range sizes {
		p := Paired{A: make([]float64, n), B: make([]float64, n)}
		for i := range n {
			p.A[i] = 1 + r.ExpFloat64()
			p.B[i] = 1 + r.ExpFloat64()
			if r.IntN(40) == 0 {
				p.B[i] = math.NaN()
			}
		}
		seeds = append(seeds, p)
	}
	return seeds
}

func TestRatioRules(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct{ a, b, want float64 }{
		{3, inf, 0}, {inf, 3, inf}, {3, 0, inf}, {3, 2, 1.5},
	} {
		if got := Ratio(c.a, c.b); got != c.want {
			t.Errorf("%v/%v = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	if !math.IsNaN(Ratio(inf, inf)) || !math.IsNaN(Ratio(0, 0)) {
		t.Error("+Inf/+Inf and 0/0 should be NaN")
	}
}

// TestRatioCIPaired has B = 2 A flow by flow, so every paired resample's
// pools are the same ranks of A and of 2 A and the ratio is exactly 0.5.
// Resampling A and B independently gives other ratios (checked below on
// the same data), so this pins the pairing.
func TestRatioCIPaired(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	seeds := expSeeds(r, 300, 500, 1200, 50)
	for _, s := range seeds {
		for i := range s.A {
			s.B[i] = 2 * s.A[i]
		}
		s.A[7], s.B[7] = math.NaN(), math.NaN()
	}
	for _, p := range []float64{50, 99, 99.9} {
		est, ci := RatioCI(seeds, pct(p), 300, 1, Conf)
		if est != 0.5 || ci != (Interval{Lo: 0.5, Hi: 0.5}) {
			t.Errorf("p%v: %v %v, want 0.5 [0.5, 0.5]", p, est, ci)
		}
	}
	unpaired := Bootstrap(1, 300, Conf, func(r *rand.Rand) float64 {
		var a, b []float64
		for range seeds {
			s := seeds[r.IntN(len(seeds))]
			for range s.A {
				a = append(a, s.A[r.IntN(len(s.A))])
				b = append(b, s.B[r.IntN(len(s.B))])
			}
		}
		return Ratio(metrics.Percentile(Pool(a), 99), metrics.Percentile(Pool(b), 99))
	})
	if unpaired == (Interval{Lo: 0.5, Hi: 0.5}) {
		t.Error("unpaired resampling also gives exactly 0.5: the test data cannot tell pairing")
	}
}

// naiveRatioCI is the two-level paired bootstrap written plainly (sorting
// each pool), drawing from the generator in the same order as RatioCI.
func naiveRatioCI(seeds []Paired, stat func([]float64) float64, b int, seed uint64, conf float64) Interval {
	return Bootstrap(seed, b, conf, func(r *rand.Rand) float64 {
		var a, bb []float64
		for range seeds {
			s := seeds[r.IntN(len(seeds))]
			for range s.A {
				i := r.IntN(len(s.A))
				a = append(a, s.A[i])
				bb = append(bb, s.B[i])
			}
		}
		return Ratio(stat(Pool(a)), stat(Pool(bb)))
	})
}

func TestRatioCIMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	seeds := expSeeds(r, 200, 0, 350, 90, 400)
	seeds[2].A[5] = math.Inf(1) // a flow that never completed under A
	// Percentiles, and a mean below p90 and the pool size, which see
	// how often each unit was drawn.
	stats := map[string]func([]float64) float64{"p50": pct(50), "p99": pct(99), "p99.9": pct(99.9),
		"body mean": func(s []float64) float64 {
			sum, n := 0.0, len(s)*9/10
			for _, x := range s[:n] {
				sum += x
			}
			return sum / float64(n)
		},
		"size": func(s []float64) float64 { return float64(len(s)) },
	}
	for name, stat := range stats {
		_, got := RatioCI(seeds, stat, 400, 9, Conf)
		if want := naiveRatioCI(seeds, stat, 400, 9, Conf); got != want {
			t.Errorf("%s: %v, plain two-level bootstrap %v", name, got, want)
		}
	}
}

func TestRatioCIEstimate(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	seeds := expSeeds(r, 100, 250, 30)
	var a, b []float64
	for _, s := range seeds {
		for i := range s.A {
			a = append(a, s.A[i])
			if !math.IsNaN(s.B[i]) {
				b = append(b, s.B[i])
			}
		}
	}
	sort.Float64s(a)
	sort.Float64s(b)
	est, ci := RatioCI(seeds, pct(99), 0, 1, Conf)
	if want := metrics.Percentile(a, 99) / metrics.Percentile(b, 99); est != want {
		t.Errorf("estimate %v, want %v", est, want)
	}
	// A and B come from one distribution: the interval holds 1.
	if !(ci.Lo <= 1 && 1 <= ci.Hi) {
		t.Errorf("same law: %v does not contain 1", ci)
	}
}

func TestRatioCIReproducible(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	seeds := expSeeds(r, 150, 220, 180)
	_, a := RatioCI(seeds, pct(50), 500, 1, Conf)
	_, b := RatioCI(seeds, pct(50), 500, 1, Conf)
	_, c := RatioCI(seeds, pct(50), 500, 2, Conf)
	if a != b {
		t.Errorf("same seed: %v then %v", a, b)
	}
	if a == c {
		t.Errorf("seeds 1 and 2 both give %v", a)
	}
	// Identical samples of the two laws: every ratio of medians is 1.
	for _, s := range seeds {
		copy(s.B, s.A)
	}
	if est, ci := RatioCI(seeds, pct(50), 500, 1, Conf); est != 1 || ci != (Interval{Lo: 1, Hi: 1}) {
		t.Errorf("identical laws: %v %v, want 1 [1, 1]", est, ci)
	}
}

func TestRatioCIPerRun(t *testing.T) {
	// One number per run: the ratio of the medians over runs.
	a := []float64{4, 8, 6, 5, 7}
	b := []float64{2, 4, 3, 2.5, 3.5}
	var seeds []Paired
	for i := range a {
		seeds = append(seeds, Paired{A: a[i : i+1], B: b[i : i+1]})
	}
	est, ci := RatioCI(seeds, pct(50), 0, 1, Conf)
	if est != 2 || ci != (Interval{Lo: 2, Hi: 2}) {
		t.Errorf("A = 2 B run by run: %v %v, want 2 [2, 2]", est, ci)
	}
	if est, ci := RatioCI(nil, pct(50), 0, 1, Conf); !math.IsNaN(est) || ci != unbounded() {
		t.Errorf("no seeds: %v %v", est, ci)
	}
}

func TestRatioCIMismatchPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("A and B of different lengths did not panic")
		}
	}()
	RatioCI([]Paired{{A: []float64{1, 2}, B: []float64{1}}}, pct(50), 10, 1, Conf)
}
