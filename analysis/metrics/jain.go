package metrics

import (
	"math"
	"time"
)

// Jain is Jain's fairness index (sum x)^2 / (n * sum x^2): 1 when all
// shares are equal, 1/n when one of n takes everything. It is NaN for no
// shares or when every share is zero (fairness is undefined, not perfect).
func Jain(shares []float64) float64 {
	var sum, sq float64
	for _, x := range shares {
		sum += x
		sq += x * x
	}
	if len(shares) == 0 || sq == 0 {
		return math.NaN()
	}
	return sum * sum / (float64(len(shares)) * sq)
}

// Point is a value at a time (ns from the start of the run).
type Point struct {
	T time.Duration `json:"t_ns"`
	V float64       `json:"v"`
}

// TimeToFairness is the first time at or after from when the index
// reaches threshold and stays at or above it for hold (every point in
// [t, t+hold] at or above it, and the series lasting at least that long).
// ok is false when that never happens. NaN points break a hold.
func TimeToFairness(series []Point, from time.Duration, threshold float64, hold time.Duration) (at time.Duration, ok bool) {
	start := -1
	for i, p := range series {
		if p.T < from {
			continue
		}
		if math.IsNaN(p.V) || p.V < threshold {
			start = -1
			continue
		}
		if start < 0 {
			start = i
		}
		if p.T-series[start].T >= hold {
			return series[start].T, true
		}
	}
	return 0, false
}
