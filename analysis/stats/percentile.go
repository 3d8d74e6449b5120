package stats

import (
	"math"
	"slices"

	"cclab/analysis/metrics"
)

// MinFlows returns the fewest samples for which the nearest-rank p-th
// percentile is not simply the maximum: the smallest n with rank(p, n) < n,
// about 1/(1-p/100) (p99.9 -> 1000, p99 -> 100, p95 -> 20, p50 -> 2). It is
// 0 for p >= 100, where no n suffices.
func MinFlows(p float64) int {
	if !(p < 100) {
		return 0
	}
	below := func(n int) bool { return nearestRank(n, p) < n }
	n := max(2, int(math.Ceil(1/(1-p/100))))
	// The guess can be off by one either way through rounding and the
	// epsilon in metrics.Percentile, which is the definition.
	for n > 2 && below(n-1) {
		n--
	}
	for !below(n) {
		n++
	}
	return n
}

// nearestRank is the 1-based rank metrics.Percentile picks among n values,
// read off metrics.Percentile itself so that there is one definition.
func nearestRank(n int, p float64) int {
	ranks := make([]float64, n)
	for i := range ranks {
		ranks[i] = float64(i + 1)
	}
	return int(metrics.Percentile(ranks, p))
}

// Percentile returns the nearest-rank p-th percentile of xs (unsorted; NaN
// dropped, +Inf kept as a censored "never" that sorts last), its
// order-statistic conf interval (PercentileRanks) and the number of values
// used. With no values the estimate is NaN and the interval unbounded.
func Percentile(xs []float64, p, conf float64) (est float64, ci Interval, n int) {
	return percentileSorted(Pool(xs), p, conf)
}

func percentileSorted(s []float64, p, conf float64) (float64, Interval, int) {
	n := len(s)
	lo, hi := PercentileRanks(n, p, conf)
	return metrics.Percentile(s, p), orderInterval(s, lo, hi), n
}

// orderInterval is [s(lo), s(hi)] for 1-based ranks, unbounded on a side
// whose rank is outside 1..n.
func orderInterval(s []float64, lo, hi int) Interval {
	ci := unbounded()
	if lo >= 1 && lo <= len(s) {
		ci.Lo, ci.NoLower = s[lo-1], false
	}
	if hi >= 1 && hi <= len(s) {
		ci.Hi, ci.NoUpper = s[hi-1], false
	}
	return ci
}

// Pool concatenates samples (e.g. each seed's flows) into one new sorted
// slice, NaN dropped and +Inf last.
func Pool(groups ...[]float64) []float64 {
	total := 0
	for _, g := range groups {
		total += len(g)
	}
	s := make([]float64, 0, total)
	for _, g := range groups {
		for _, x := range g {
			if !math.IsNaN(x) {
				s = append(s, x)
			}
		}
	}
	slices.Sort(s)
	return s
}
