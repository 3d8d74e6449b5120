// Package metrics computes the figures the papers report from per-flow
// results: FCT slowdown percentiles per size bin, Jain's fairness index and
// time to fairness. It knows nothing about captures or files.
package metrics

import (
	"math"
	"sort"
)

// Percentile is the nearest-rank percentile of sorted values: the smallest
// value with at least p % of the values at or below it (p in (0, 100]).
// It is NaN for no values. Nearest rank never interpolates, so p99.9 of
// fewer than 1000 values is the maximum.
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	// The epsilon keeps 99.9 % of 1000 at rank 999 despite binary rounding.
	x := p / 100 * float64(n)
	rank := int(math.Ceil(x - 1e-9*x))
	rank = min(max(rank, 1), n)
	return sorted[rank-1]
}

// Summary describes a set of values with the percentiles the papers use.
type Summary struct {
	N    int `json:"n"`
	Mean Num `json:"mean"`
	P50  Num `json:"p50"`
	P95  Num `json:"p95"`
	P99  Num `json:"p99"`
	P999 Num `json:"p99_9"`
	Max  Num `json:"max"`
}

// Summarize sorts a copy of values and summarises it.
func Summarize(values []float64) Summary {
	s := append([]float64(nil), values...)
	sort.Float64s(s)
	out := Summary{N: len(s)}
	if len(s) == 0 {
		nan := Num(math.NaN())
		out.Mean, out.P50, out.P95, out.P99, out.P999, out.Max = nan, nan, nan, nan, nan, nan
		return out
	}
	var sum float64
	for _, v := range s {
		sum += v
	}
	out.Mean = Num(sum / float64(len(s)))
	out.P50, out.P95 = Num(Percentile(s, 50)), Num(Percentile(s, 95))
	out.P99, out.P999 = Num(Percentile(s, 99)), Num(Percentile(s, 99.9))
	out.Max = Num(s[len(s)-1])
	return out
}
