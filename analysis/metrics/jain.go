package metrics

import (
	"math"
	"sort"
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
	return NewFairness(series, threshold, hold).From(from)
}

// Fairness answers TimeToFairness for many start times over one series in
// O(log n) each (a run's convergence after every change of its flows).
type Fairness struct {
	series []Point
	next   []int // next[i]: first j >= i from which the index holds; -1 if none
}

// NewFairness prepares the series (sorted by time).
func NewFairness(series []Point, threshold float64, hold time.Duration) *Fairness {
	n := len(series)
	f := &Fairness{series: series, next: make([]int, n+1)}
	fair := func(i int) bool { return !math.IsNaN(series[i].V) && series[i].V >= threshold }
	// A point holds when the run of fair points it starts lasts >= hold;
	// holding only weakens along a run, so the first point that holds after
	// a start time is the answer for it.
	f.next[n] = -1
	runEnd := -1
	for i := n - 1; i >= 0; i-- {
		if !fair(i) {
			runEnd = -1
			f.next[i] = f.next[i+1]
			continue
		}
		if runEnd < 0 {
			runEnd = i
		}
		if series[runEnd].T-series[i].T >= hold {
			f.next[i] = i
		} else {
			f.next[i] = f.next[i+1]
		}
	}
	return f
}

// From is the first time at or after from when the index holds.
func (f *Fairness) From(from time.Duration) (time.Duration, bool) {
	i := sort.Search(len(f.series), func(i int) bool { return f.series[i].T >= from })
	j := f.next[i]
	if j < 0 {
		return 0, false
	}
	return f.series[j].T, true
}
