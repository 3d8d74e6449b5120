package stats

import "math"

// Interval is a two-sided confidence interval. Lo may be -Inf and Hi +Inf
// when the data cannot bound that side.
type Interval struct{ Lo, Hi float64 }

// Conf is the default confidence level.
const Conf = 0.95

// unbounded is the interval of data that bound nothing.
func unbounded() Interval {
	return Interval{Lo: math.Inf(-1), Hi: math.Inf(1)}
}

// tail is the probability (1-conf)/2 left out on each side.
func tail(conf float64) float64 {
	return (1 - conf) / 2
}
