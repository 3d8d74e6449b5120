package stats

import "math"

// PercentileRanks gives the 1-based order-statistic ranks (lo, hi) of a
// distribution-free two-sided conf interval for the p-th percentile of a
// continuous distribution from n iid samples: with B ~ Binomial(n, p/100),
// lo is the largest rank with P(B <= lo-1) <= (1-conf)/2 and hi the
// smallest with P(B <= hi-1) >= 1-(1-conf)/2, so that
// P(X(lo) <= quantile <= X(hi)) >= conf. lo = 0 means no lower bound and
// hi = n+1 no upper bound. For p outside (0, 100) or conf outside (0, 1)
// it bounds nothing: (0, n+1).
//
// The binomial sums are exact up to rounding: each tail is summed from its
// own end, smallest terms first, so 1-conf is never lost to cancellation,
// and terms too small to be represented are skipped (they add nothing).
func PercentileRanks(n int, p, conf float64) (lo, hi int) {
	if n <= 0 || !(p > 0 && p < 100) || !(conf > 0 && conf < 1) {
		return 0, max(n, 0) + 1
	}
	b := newBinom(n, p/100)
	a := tail(conf)

	// lo: the first k with P(B <= k) > a (then P(B <= lo-1) <= a).
	lo = n
	cum := 0.0
	for k := b.first(); k <= n; k++ {
		cum += b.pmf(k)
		if cum > a {
			lo = k
			break
		}
	}
	// hi: one above the last k with P(B >= k) > a, read from the top
	// (P(B <= hi-1) = 1 - P(B >= hi)).
	hi = 1
	cum = 0
	for k := b.last(); k >= 0; k-- {
		cum += b.pmf(k)
		if cum > a {
			hi = k + 1
			break
		}
	}
	return lo, hi
}

// binom is Binomial(n, q) with its pmf in log space, so that n up to
// millions neither overflows nor underflows before the end.
type binom struct {
	n          int
	lq, lq1    float64 // log q, log(1-q)
	lgn1, mode float64
}

func newBinom(n int, q float64) binom {
	lg, _ := math.Lgamma(float64(n) + 1)
	return binom{n: n, lq: math.Log(q), lq1: math.Log1p(-q), lgn1: lg,
		mode: math.Floor(float64(n+1) * q)}
}

func (b binom) logPMF(k int) float64 {
	l1, _ := math.Lgamma(float64(k) + 1)
	l2, _ := math.Lgamma(float64(b.n-k) + 1)
	return b.lgn1 - l1 - l2 + float64(k)*b.lq + float64(b.n-k)*b.lq1
}

func (b binom) pmf(k int) float64 { return math.Exp(b.logPMF(k)) }

// tiny is a log probability below which a term is 0 in float64 (the
// smallest subnormal is about e^-745); a million such terms still add
// less than 1e-300.
const tiny = -760

// first is the smallest k whose term is representable: the log pmf is
// concave, so it rises up to the mode and a bisection finds the crossing.
func (b binom) first() int {
	lo, hi := 0, min(int(b.mode), b.n)
	if b.logPMF(lo) >= tiny {
		return lo
	}
	for hi-lo > 1 { // logPMF(lo) < tiny <= logPMF(hi)
		m := (lo + hi) / 2
		if b.logPMF(m) < tiny {
			lo = m
		} else {
			hi = m
		}
	}
	return hi
}

// last is the largest k whose term is representable (mirror of first).
func (b binom) last() int {
	lo, hi := min(int(b.mode), b.n), b.n
	if b.logPMF(hi) >= tiny {
		return hi
	}
	for hi-lo > 1 { // logPMF(lo) >= tiny > logPMF(hi)
		m := (lo + hi) / 2
		if b.logPMF(m) < tiny {
			hi = m
		} else {
			lo = m
		}
	}
	return lo
}
