package stats

import (
	"cmp"
	"math"
	"slices"
)

// Obs is a censored time to an event: the event happened at T (Event), or
// had not happened by T when observation stopped (censored; T may be +Inf
// when the horizon is unknown, as for a run that never converged).
type Obs struct {
	T     float64
	Event bool
}

// kmEps absorbs the rounding of the survival product: a product that is
// 0.5 exactly (e.g. 3/4 * 2/3) may come out a hair above it.
const kmEps = 1e-9

// KMMedian is the Kaplan-Meier median: the smallest event time at which the
// KM survival estimate falls to 0.5 or below, +Inf when it never does (the
// median is not reached) and NaN with no observations. At equal times,
// events come before censorings (a run censored at t was still at risk at
// t). Observations with a NaN time are dropped.
func KMMedian(obs []Obs) float64 {
	o := make([]Obs, 0, len(obs))
	for _, x := range obs {
		if !math.IsNaN(x.T) {
			o = append(o, x)
		}
	}
	if len(o) == 0 {
		return math.NaN()
	}
	// Events before censorings at equal times needs no tie-break: a time's
	// observations are taken together, all still at risk.
	slices.SortFunc(o, func(a, b Obs) int { return cmp.Compare(a.T, b.T) })
	surv := 1.0
	for i := 0; i < len(o); {
		atRisk := len(o) - i
		d, j := 0, i
		for ; j < len(o) && o[j].T == o[i].T; j++ {
			if o[j].Event {
				d++
			}
		}
		if d > 0 {
			surv *= 1 - float64(d)/float64(atRisk)
			if surv <= 0.5+kmEps {
				return o[i].T
			}
		}
		i = j
	}
	return math.Inf(1)
}

// MedianCensoredCI gives the KM median (KMMedian), a distribution-free
// conf interval and the number of observations. The interval takes the
// ranks PercentileRanks(n, 50, conf) among the times with every censored
// observation put at +Inf, so a bound on a censored rank is +Inf. That is
// valid only when every censoring comes after every event, as in runs that
// watch until their end and censor only the ones that never got there; an
// earlier censoring would need the KM (Greenwood or Brookmeyer-Crowley)
// interval instead, so then the interval is unbounded. When it is valid
// the estimate is also the nearest-rank median of the same values.
func MedianCensoredCI(obs []Obs, conf float64) (est float64, ci Interval, n int) {
	xs := make([]float64, 0, len(obs))
	lastEvent, firstCensor := math.Inf(-1), math.Inf(1)
	for _, o := range obs {
		switch {
		case math.IsNaN(o.T):
		case o.Event:
			lastEvent = max(lastEvent, o.T)
		default:
			firstCensor = min(firstCensor, o.T)
		}
	}
	for _, o := range obs {
		switch {
		case math.IsNaN(o.T):
		case o.Event:
			xs = append(xs, o.T)
		default:
			xs = append(xs, math.Inf(1))
		}
	}
	slices.Sort(xs)
	if firstCensor < lastEvent {
		return KMMedian(obs), unbounded(), len(xs)
	}
	lo, hi := PercentileRanks(len(xs), 50, conf)
	return KMMedian(obs), orderInterval(xs, lo, hi), len(xs)
}
