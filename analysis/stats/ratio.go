package stats

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Paired is one seed's (one run's) samples of two laws A and B over the
// same units: A[i] and B[i] are the same flow (same arrival and size in
// both laws' runs). NaN marks a unit one law lacks; +Inf a flow that did
// not complete (censored, sorts last). For a per-run statistic (one number
// per run) A and B have length 1.
type Paired struct{ A, B []float64 }

// RatioCI estimates stat(pool of A) / stat(pool of B) over all seeds and
// gives a paired two-level percentile bootstrap interval (Bootstrap with
// b resamples, DefaultB if b <= 0): each resample draws seeds with
// replacement, then within each drawn seed draws units with replacement,
// the same indices for A and B, pools the drawn A values and the drawn B
// values (NaN dropped) and takes the ratio of stat on the two sorted pools.
// stat gets a sorted pool it must neither keep nor modify, e.g.
// func(s []float64) float64 { return metrics.Percentile(s, 99.9) }.
//
// The ratio is IEEE division, which is the rule wanted: x/+Inf with x
// finite is 0, +Inf/x is +Inf, x/0 with x > 0 is +Inf, and +Inf/+Inf and
// 0/0 are NaN (dropped by Bootstrap). The same inputs and seed give the
// same interval. RatioCI panics if a seed's A and B differ in length,
// since then they cannot be paired.
func RatioCI(seeds []Paired, stat func(sorted []float64) float64, b int, seed uint64, conf float64) (est float64, ci Interval) {
	u := newUnits(seeds)
	pa, pb := drawnPool(u.a, u.orderA, nil, nil), drawnPool(u.b, u.orderB, nil, nil)
	est = Ratio(stat(pa), stat(pb))
	if len(seeds) == 0 {
		return est, unbounded()
	}
	counts := make([]int32, len(u.a))
	ci = Bootstrap(seed, b, conf, func(r *rand.Rand) float64 {
		clear(counts)
		for range len(seeds) {
			s := r.IntN(len(seeds))
			m := u.off[s+1] - u.off[s]
			for range m {
				counts[u.off[s]+r.IntN(m)]++
			}
		}
		pa = drawnPool(u.a, u.orderA, counts, pa[:0])
		pb = drawnPool(u.b, u.orderB, counts, pb[:0])
		return Ratio(stat(pa), stat(pb))
	})
	return est, ci
}

// Ratio is the ratio of two laws' statistics, with RatioCI's rules for a
// never (+Inf) and a zero: IEEE division does them for non-negative
// numbers (x/+Inf = 0, +Inf/x = +Inf, +Inf/+Inf and 0/0 NaN, x/0 = +Inf).
func Ratio(a, b float64) float64 { return a / b }

// units flattens the seeds' units into one index space. Each law's
// non-NaN units are sorted once by value, so that a resample's sorted pool
// is a walk through that order repeating each unit as often as it was
// drawn: linear per resample, and the same slice a sort would give.
type units struct {
	off            []int     // seed s holds units off[s] to off[s+1]-1
	a, b           []float64 // values by unit
	orderA, orderB []int     // non-NaN units by ascending value
}

func newUnits(seeds []Paired) units {
	u := units{off: make([]int, 1, len(seeds)+1)}
	for i, s := range seeds {
		if len(s.A) != len(s.B) {
			panic(fmt.Sprintf("stats.RatioCI: seed %d has %d A values and %d B values", i, len(s.A), len(s.B)))
		}
		u.a = append(u.a, s.A...)
		u.b = append(u.b, s.B...)
		u.off = append(u.off, len(u.a))
	}
	u.orderA, u.orderB = sortedUnits(u.a), sortedUnits(u.b)
	return u
}

func sortedUnits(v []float64) []int {
	var idx []int
	for i, x := range v {
		if !math.IsNaN(x) {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(i, j int) int { return cmp.Compare(v[i], v[j]) })
	return idx
}

// drawnPool appends to dst the values of the units in order, each counts[i]
// times (once each if counts is nil), which is sorted.
func drawnPool(v []float64, order []int, counts []int32, dst []float64) []float64 {
	for _, i := range order {
		c := int32(1)
		if counts != nil {
			c = counts[i]
		}
		for ; c > 0; c-- {
			dst = append(dst, v[i])
		}
	}
	return dst
}
