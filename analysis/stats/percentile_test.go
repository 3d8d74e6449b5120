package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"cclab/analysis/metrics"
)

func TestMinFlows(t *testing.T) {
	for _, c := range []struct {
		p    float64
		want int
	}{{99.9, 1000}, {99, 100}, {95, 20}, {90, 10}, {50, 2}, {10, 2}, {99.99, 10000}} {
		if got := MinFlows(c.p); got != c.want {
			t.Errorf("MinFlows(%v) = %d, want %d", c.p, got, c.want)
		}
	}
	// The defining property, read off metrics.Percentile on distinct values.
	for _, p := range []float64{33.3, 75, 97.5, 99.5, 99.95} {
		n := MinFlows(p)
		isMax := func(n int) bool {
			v := make([]float64, n)
			for i := range v {
				v[i] = float64(i)
			}
			return metrics.Percentile(v, p) == v[n-1]
		}
		if isMax(n) || !isMax(n-1) {
			t.Errorf("MinFlows(%v) = %d: p-th percentile of %d is the max: %v, of %d: %v", p, n, n, isMax(n), n-1, isMax(n-1))
		}
	}
	if MinFlows(100) != 0 {
		t.Error("MinFlows(100) should be 0: the nearest-rank p100 is always the maximum")
	}
}

func TestPoolEqualsConcatenation(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		var groups [][]float64
		var all []float64
		for range 1 + r.IntN(8) {
			g := make([]float64, r.IntN(400))
			for i := range g {
				switch r.IntN(50) {
				case 0:
					g[i] = math.NaN()
				case 1:
					g[i] = math.Inf(1)
				default:
					g[i] = r.ExpFloat64() * 10
				}
				if !math.IsNaN(g[i]) {
					all = append(all, g[i])
				}
			}
			groups = append(groups, g)
		}
		sort.Float64s(all)
		pooled := Pool(groups...)
		if len(pooled) != len(all) {
			t.Fatalf("trial %d: pooled %d values, want %d", trial, len(pooled), len(all))
		}
		for _, p := range []float64{1, 50, 90, 99, 99.9} {
			want := metrics.Percentile(all, p)
			if got := metrics.Percentile(pooled, p); got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Errorf("trial %d p%v: pooled %v, concatenation %v", trial, p, got, want)
			}
			// Percentile on the unsorted concatenation, NaN included.
			var raw []float64
			for _, g := range groups {
				raw = append(raw, g...)
			}
			est, ci, n := Percentile(raw, p, Conf)
			if n != len(all) || (est != want && !(math.IsNaN(est) && math.IsNaN(want))) {
				t.Errorf("trial %d p%v: Percentile %v (n %d), want %v (n %d)", trial, p, est, n, want, len(all))
			}
			if n > 0 && !(ci.Lo <= est && est <= ci.Hi) {
				t.Errorf("trial %d p%v: %v outside %v", trial, p, est, ci)
			}
		}
	}
}

func TestPercentileCensoredAndEmpty(t *testing.T) {
	// 1000 values of which the top two never completed: p99.9 is rank 999,
	// a "never", and so is the interval's upper side; the lower rank is
	// 997 (checked against an independent sum in TestPercentileRanksP999).
	xs := make([]float64, 1000)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	xs[998], xs[999] = math.Inf(1), math.Inf(1)
	xs = append(xs, math.NaN())
	est, ci, n := Percentile(xs, 99.9, Conf)
	if n != 1000 || !math.IsInf(est, 1) || !math.IsInf(ci.Hi, 1) || ci.Lo != 997 {
		t.Errorf("p99.9 with two nevers: %v %v n=%d, want +Inf (997, +Inf) n=1000", est, ci, n)
	}
	est, ci, n = Percentile([]float64{math.NaN()}, 50, Conf)
	if n != 0 || !math.IsNaN(est) || ci != unbounded() {
		t.Errorf("no values: %v %v %d", est, ci, n)
	}
}

func TestPercentileInterval(t *testing.T) {
	// Ranks (1, 6) of six values (TestPercentileRanksExactSmallN): the
	// interval is the minimum and the maximum.
	xs := []float64{5, 1, 4, 2, 3, 6}
	est, ci, n := Percentile(xs, 50, Conf)
	s := slices.Sorted(slices.Values(xs))
	if n != 6 || est != 3 || ci != (Interval{Lo: s[0], Hi: s[5]}) {
		t.Errorf("p50 of 1..6: %v %v %d", est, ci, n)
	}
}
