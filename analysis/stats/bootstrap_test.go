package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// meanResample is the statistic of one ordinary bootstrap resample of xs.
func meanResample(xs []float64) func(r *rand.Rand) float64 {
	return func(r *rand.Rand) float64 {
		s := 0.0
		for range xs {
			s += xs[r.IntN(len(xs))]
		}
		return s / float64(len(xs))
	}
}

func TestBootstrapMeanMatchesT(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	xs := make([]float64, 200)
	for i := range xs {
		xs[i] = 10 + 3*r.NormFloat64()
	}
	est, tci, _ := MeanCI(xs, Conf)
	ci := Bootstrap(1, 0, Conf, meanResample(xs))
	if !(ci.Lo < est && est < ci.Hi) {
		t.Errorf("bootstrap %v does not contain the mean %v", ci, est)
	}
	// For normal data the bootstrap and t intervals agree to a few %.
	if w, tw := ci.Hi-ci.Lo, tci.Hi-tci.Lo; math.Abs(w/tw-1) > 0.15 {
		t.Errorf("bootstrap width %v, t width %v", w, tw)
	}
}

func TestBootstrapReproducible(t *testing.T) {
	xs := []float64{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9}
	a := Bootstrap(7, 500, Conf, meanResample(xs))
	b := Bootstrap(7, 500, Conf, meanResample(xs))
	c := Bootstrap(8, 500, Conf, meanResample(xs))
	if a != b {
		t.Errorf("same seed: %v then %v", a, b)
	}
	if a == c {
		t.Errorf("seeds 7 and 8 both give %v", a)
	}
}

func TestBootstrapNaNAndInf(t *testing.T) {
	// One result in 20 NaN (no more than the 5 % tail of a 90 % interval):
	// dropped, the rest 1..100 and +Inf last.
	i := 0
	ci := Bootstrap(1, 106, 0.9, func(*rand.Rand) float64 {
		i++
		switch {
		case i%21 == 0:
			return math.NaN()
		case i == 106:
			return math.Inf(1)
		}
		return float64(i - i/21)
	})
	// 101 values 1..100, +Inf: nearest ranks ceil(5.05) = 6 and
	// ceil(95.95) = 96.
	if ci != (Interval{Lo: 6, Hi: 96}) {
		t.Errorf("interval %v, want (6, 96)", ci)
	}
	ci = Bootstrap(1, 10, Conf, func(*rand.Rand) float64 { return math.NaN() })
	if ci != unbounded() {
		t.Errorf("all NaN: %v, want unbounded", ci)
	}
	// More NaN than a tail: the defined resamples do not make an interval.
	i = 0
	ci = Bootstrap(1, 100, 0.9, func(*rand.Rand) float64 {
		i++
		if i%10 == 0 {
			return math.NaN()
		}
		return float64(i)
	})
	if ci != unbounded() {
		t.Errorf("10 %% NaN at 90 %%: %v, want unbounded", ci)
	}
}
