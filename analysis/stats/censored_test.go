package stats

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"cclab/analysis/metrics"
)

func events(ts ...float64) []Obs {
	o := make([]Obs, len(ts))
	for i, t := range ts {
		o[i] = Obs{T: t, Event: true}
	}
	return o
}

func TestKMMedianUncensoredIsLowerMedian(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		n := 1 + r.IntN(60)
		ts := make([]float64, n)
		for i := range ts {
			ts[i] = float64(r.IntN(20)) // ties on purpose
		}
		got := KMMedian(events(ts...))
		sort.Float64s(ts)
		if want := metrics.Percentile(ts, 50); got != want {
			t.Errorf("trial %d (%v): KM median %v, nearest-rank median %v", trial, ts, got, want)
		}
	}
}

func TestKMMedianCensoredBeforeEvents(t *testing.T) {
	// Censored at 1 and 2, events at 3, 4, 6, 7, censored at 5:
	//   t=3: 5 at risk, S = 4/5         = 0.8
	//   t=4: 4 at risk, S = 0.8 * 3/4   = 0.6
	//   (5 leaves, censored)
	//   t=6: 2 at risk, S = 0.6 * 1/2   = 0.3 <= 0.5: median 6,
	// where treating the censored as +Inf would give rank 4 of
	// {3, 4, 6, 7, +Inf, +Inf, +Inf} = 7.
	obs := []Obs{{1, false}, {2, false}, {3, true}, {4, true}, {5, false}, {6, true}, {7, true}}
	if got := KMMedian(obs); got != 6 {
		t.Errorf("KM median %v, want 6", got)
	}
	// Ties: at t=2 one event and three censorings. Events first:
	//   t=1: 6 at risk, S = 5/6; t=2: 5 at risk, S = 5/6 * 4/5 = 2/3;
	//   t=5: 1 at risk, S = 0: median 5.
	// Censorings first would give S(2) = 5/6 * 1/2 = 5/12 and median 2.
	obs = []Obs{{2, false}, {2, false}, {2, true}, {1, true}, {2, false}, {5, true}}
	if got := KMMedian(obs); got != 5 {
		t.Errorf("tied censorings: KM median %v, want 5", got)
	}
	// Exactly 0.5 after rounding: 3/4 * 2/3.
	if got := KMMedian(events(1, 2, 3, 4)); got != 2 {
		t.Errorf("KM median of 1..4 = %v, want 2", got)
	}
}

func TestKMMedianNotReached(t *testing.T) {
	inf := math.Inf(1)
	if got := KMMedian([]Obs{{3, false}, {inf, false}}); !math.IsInf(got, 1) {
		t.Errorf("all censored: %v, want +Inf", got)
	}
	// One event of three: S = 2/3 never reaches 0.5.
	if got := KMMedian([]Obs{{1, true}, {inf, false}, {inf, false}}); !math.IsInf(got, 1) {
		t.Errorf("one event of three: %v, want +Inf", got)
	}
	if got := KMMedian(nil); !math.IsNaN(got) {
		t.Errorf("no observations: %v, want NaN", got)
	}
}

func TestMedianCensoredCIResultsPage(t *testing.T) {
	inf := math.Inf(1)
	never := Obs{T: inf}
	// Three runs, one never converged: S = 2/3 at 3.8, 1/3 at 10.9.
	est, ci, n := MedianCensoredCI([]Obs{{3.8, true}, {10.9, true}, never}, Conf)
	if est != 10.9 || n != 3 || ci != unbounded() {
		t.Errorf("3 runs: %v %v n=%d, want 10.9 (-Inf, +Inf) n=3", est, ci, n)
	}
	// Six runs: S = 5/6, 4/6, 3/6 at 3; ranks (1, 6) of
	// {1, 2, 3, 4, +Inf, +Inf}.
	est, ci, n = MedianCensoredCI([]Obs{{4, true}, never, {2, true}, {1, true}, never, {3, true}}, Conf)
	if est != 3 || n != 6 || ci != (Interval{Lo: 1, Hi: inf}) {
		t.Errorf("6 runs: %v %v n=%d, want 3 (1, +Inf) n=6", est, ci, n)
	}
}

func TestMedianCensoredCIMatchesPercentile(t *testing.T) {
	// Censoring only after every event: the KM median is the nearest-rank
	// median with the censored at +Inf, and the interval is Percentile's.
	r := rand.New(rand.NewPCG(8, 9))
	for trial := range 100 {
		n := 1 + r.IntN(40)
		var obs []Obs
		var xs []float64
		for range n {
			if r.IntN(3) == 0 {
				obs = append(obs, Obs{T: 100 + r.Float64()})
				xs = append(xs, math.Inf(1))
			} else {
				x := r.Float64() * 100
				obs = append(obs, Obs{T: x, Event: true})
				xs = append(xs, x)
			}
		}
		est, ci, m := MedianCensoredCI(obs, Conf)
		west, wci, wm := Percentile(xs, 50, Conf)
		if est != west || ci != wci || m != wm {
			t.Errorf("trial %d: %v %v %d, Percentile gives %v %v %d", trial, est, ci, m, west, wci, wm)
		}
	}
}

// A censoring before an event breaks the rank interval's premise: the
// interval is then unbounded, the KM median still given.
func TestMedianCensoredEarlyCensoring(t *testing.T) {
	obs := []Obs{{1, true}, {2, false}, {3, true}, {4, true}, {5, true}, {6, true}, {7, true}}
	est, ci, n := MedianCensoredCI(obs, Conf)
	if n != 7 || ci != unbounded() || est != KMMedian(obs) {
		t.Errorf("early censoring: %v %v %d", est, ci, n)
	}
	obs[1].Event = true
	if _, ci, _ := MedianCensoredCI(obs, Conf); ci.NoLower || ci.NoUpper {
		t.Errorf("no censoring: %v", ci)
	}
}
