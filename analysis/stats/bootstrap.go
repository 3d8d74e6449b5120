package stats

import (
	"math"
	"math/rand/v2"
	"slices"

	"cclab/analysis/metrics"
)

// DefaultB is the default number of bootstrap resamples.
const DefaultB = 2000

// bootStream is the PCG stream of every bootstrap: fixed, so that the seed
// alone decides the resamples.
const bootStream = 0x9e3779b97f4a7c15

// Bootstrap is a reproducible percentile bootstrap. stat draws one
// resample with r (math/rand/v2 over PCG(seed, a fixed stream)) and returns
// its statistic; it is called b times in turn (DefaultB if b <= 0), NaN
// results (a statistic the resample does not define) are dropped and +Inf
// kept (it sorts last). The interval is the nearest-rank (1-conf)/2 and
// 1-(1-conf)/2 quantiles of the results; unbounded when more than
// (1-conf)/2 of them were NaN, since the interval would then describe only
// the resamples that happened to define the statistic.
func Bootstrap(seed uint64, b int, conf float64, stat func(r *rand.Rand) float64) Interval {
	if b <= 0 {
		b = DefaultB
	}
	r := rand.New(rand.NewPCG(seed, bootStream))
	vals := make([]float64, 0, b)
	for range b {
		if v := stat(r); !math.IsNaN(v) {
			vals = append(vals, v)
		}
	}
	if float64(b-len(vals)) > tail(conf)*float64(b) {
		return unbounded()
	}
	slices.Sort(vals)
	a := 100 * tail(conf)
	return Interval{Lo: metrics.Percentile(vals, a), Hi: metrics.Percentile(vals, 100-a)}
}
