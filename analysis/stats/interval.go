package stats

import "math"

// Interval is a two-sided confidence interval. Where the data cannot bound
// a side (too few samples for the order statistic, too few runs for a
// spread), that side is infinite and marked Unbounded: an infinite bound
// that is not marked is a censored observation (a flow that never
// completed, a time that never came).
type Interval struct {
	Lo, Hi           float64
	NoLower, NoUpper bool // the data bound nothing on that side
}

// Conf is the default confidence level.
const Conf = 0.95

// unbounded is the interval of data that bound nothing.
func unbounded() Interval {
	return Interval{Lo: math.Inf(-1), Hi: math.Inf(1), NoLower: true, NoUpper: true}
}

// tail is the probability (1-conf)/2 left out on each side.
func tail(conf float64) float64 {
	return (1 - conf) / 2
}

// BoundedFrom is the fewest samples from which the order-statistic conf
// interval of the p-th percentile has a lower and an upper bound: a p99.9
// gets its lower bound from 3 flows and its upper one from 3688, a median
// both from 6.
func BoundedFrom(p, conf float64) (lower, upper int) {
	for n := 1; lower == 0 || upper == 0; n++ {
		lo, hi := PercentileRanks(n, p, conf)
		if lower == 0 && lo >= 1 {
			lower = n
		}
		if upper == 0 && hi <= n {
			upper = n
		}
		if n > 1e7 {
			break
		}
	}
	return lower, upper
}
