package stats

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// failCDF is P(F <= m) for m = 0..len-1, F = n - B ~ Binomial(n, 1-q): the
// number of samples above the p-th percentile. Unlike the code under test
// it sums from the other end of B, in linear space, by the recurrence
// P(F=f+1) = P(F=f) (n-f)/(f+1) (1-q)/q, which is accurate where q^n does
// not underflow (p99.9 up to n = 10000).
func failCDF(n int, q float64) []float64 {
	pf := math.Pow(q, float64(n))
	cdf := make([]float64, n+1)
	sum := 0.0
	for f := 0; f <= n; f++ {
		sum += pf
		cdf[f] = sum
		pf *= float64(n-f) / float64(f+1) * (1 - q) / q
	}
	return cdf
}

// ranksFromFailCDF applies PercentileRanks' definitions to failCDF, with
// P(B <= r-1) = 1 - P(F <= n-r).
func ranksFromFailCDF(n int, cdf []float64, conf float64) (lo, hi int) {
	a := (1 - conf) / 2
	pB := func(r int) float64 { // P(B <= r-1)
		switch {
		case r <= 0:
			return 0
		case r > n:
			return 1
		}
		return 1 - cdf[n-r]
	}
	for lo = n; lo > 0 && pB(lo) > a; lo-- {
	}
	for hi = 1; hi <= n && pB(hi) < 1-a; hi++ {
	}
	return lo, hi
}

func TestPercentileRanksP999(t *testing.T) {
	const p, q = 99.9, 0.999
	for _, n := range []int{1000, 3688, 10000} {
		lo, hi := PercentileRanks(n, p, Conf)
		cdf := failCDF(n, q)
		wlo, whi := ranksFromFailCDF(n, cdf, Conf)
		if lo != wlo || hi != whi {
			t.Errorf("n=%d: ranks (%d, %d), independent sum gives (%d, %d)", n, lo, hi, wlo, whi)
		}
		if lo < 1 {
			t.Errorf("n=%d: no lower bound", n)
		}
		// P(lo <= B <= hi-1) = P(n-hi+1 <= F <= n-lo).
		cover := cdf[n-lo]
		if hi <= n {
			cover -= cdf[n-hi]
		}
		if cover < Conf {
			t.Errorf("n=%d: coverage %v < %v", n, cover, Conf)
		}
		switch n {
		case 1000:
			if hi != n+1 {
				t.Errorf("n=1000: hi = %d, want no upper bound (%d)", hi, n+1)
			}
		case 3688:
			if !(1-math.Pow(q, 3688) >= 0.975 && 1-math.Pow(q, 3687) < 0.975) {
				t.Fatal("3688 is not where the maximum starts to bound p99.9")
			}
			if hi != n {
				t.Errorf("n=3688: hi = %d, want the maximum (%d)", hi, n)
			}
			if _, hi := PercentileRanks(n-1, p, Conf); hi != n {
				t.Errorf("n=3687: hi = %d, want no upper bound (%d)", hi, n)
			}
		case 10000:
			if hi > n {
				t.Errorf("n=10000: no upper bound")
			}
		}
	}
}

// exactRanks applies the definitions with exact rational arithmetic.
func exactRanks(n int, q *big.Rat, conf float64) (lo, hi int) {
	a := new(big.Rat).SetFloat64((1 - conf) / 2)
	one := big.NewRat(1, 1)
	b1 := new(big.Rat).Sub(one, a)
	q1 := new(big.Rat).Sub(one, q)
	cdf := make([]*big.Rat, n+1) // P(B <= k)
	sum := new(big.Rat)
	for k := 0; k <= n; k++ {
		term := new(big.Rat).SetInt(new(big.Int).Binomial(int64(n), int64(k)))
		for range k {
			term.Mul(term, q)
		}
		for range n - k {
			term.Mul(term, q1)
		}
		sum.Add(sum, term)
		cdf[k] = new(big.Rat).Set(sum)
	}
	pB := func(r int) *big.Rat { // P(B <= r-1)
		if r <= 0 {
			return new(big.Rat)
		}
		return cdf[r-1]
	}
	for lo = n; lo > 0 && pB(lo).Cmp(a) > 0; lo-- {
	}
	for hi = 1; hi <= n && pB(hi).Cmp(b1) < 0; hi++ {
	}
	return lo, hi
}

func TestPercentileRanksExactSmallN(t *testing.T) {
	if lo, hi := PercentileRanks(5, 50, Conf); lo != 0 || hi != 6 {
		t.Errorf("p50 of 5: (%d, %d), want no two-sided interval", lo, hi)
	}
	if lo, hi := PercentileRanks(6, 50, Conf); lo != 1 || hi != 6 {
		t.Errorf("p50 of 6: (%d, %d), want (1, 6)", lo, hi)
	}
	for _, c := range []struct {
		p    float64
		q    *big.Rat
		conf float64
	}{{50, big.NewRat(1, 2), Conf}, {90, big.NewRat(9, 10), 0.9}, {99, big.NewRat(99, 100), Conf}, {25, big.NewRat(1, 4), 0.99}} {
		for n := 1; n <= 70; n++ {
			lo, hi := PercentileRanks(n, c.p, c.conf)
			wlo, whi := exactRanks(n, c.q, c.conf)
			if lo != wlo || hi != whi {
				t.Errorf("p%v conf %v n=%d: (%d, %d), exact (%d, %d)", c.p, c.conf, n, lo, hi, wlo, whi)
			}
		}
	}
}

func TestPercentileRanksLargeN(t *testing.T) {
	const n = 1_000_000
	for _, p := range []float64{50, 99, 99.9} {
		q := p / 100
		lo, hi := PercentileRanks(n, p, Conf)
		// The normal approximation is within a few ranks here (the
		// binomial's skew moves it by far less than its sd).
		mu, sd := n*q, math.Sqrt(n*q*(1-q))
		wlo, whi := mu-1.959964*sd+1, mu+1.959964*sd+1
		if math.Abs(float64(lo)-wlo) > 3 || math.Abs(float64(hi)-whi) > 3 {
			t.Errorf("p%v n=1e6: (%d, %d), normal approximation (%.1f, %.1f)", p, lo, hi, wlo, whi)
		}
	}
	if lo, hi := PercentileRanks(n, 50, Conf); lo+hi != n+1 {
		t.Errorf("p50 ranks (%d, %d) not symmetric", lo, hi)
	}
}

func TestPercentileRanksDegenerate(t *testing.T) {
	for _, c := range []struct {
		n        int
		p, conf  float64
		lo, hiAt int
	}{{0, 50, Conf, 0, 1}, {10, 0, Conf, 0, 11}, {10, 100, Conf, 0, 11}, {10, 50, 1, 0, 11}, {10, math.NaN(), Conf, 0, 11}} {
		if lo, hi := PercentileRanks(c.n, c.p, c.conf); lo != c.lo || hi != c.hiAt {
			t.Errorf("n=%d p=%v conf=%v: (%d, %d)", c.n, c.p, c.conf, lo, hi)
		}
	}
}

// TestPercentileCoverage draws samples from Exp(1) and counts how often
// the interval holds the true quantile -ln(1-q). p99 at n = 200 has no
// upper bound and its lower rank covers 98.4 % exactly, so the check is
// against that exact coverage (within 4 binomial sd of the simulation) as
// well as the broad band.
func TestPercentileCoverage(t *testing.T) {
	const n, draws = 200, 2000
	r := rand.New(rand.NewPCG(11, 13))
	for _, p := range []float64{50, 99} {
		q := p / 100
		truth := -math.Log1p(-q)
		lo, hi := PercentileRanks(n, p, Conf)
		cdf := failCDF(n, q)
		exact := cdf[n-lo]
		if hi <= n {
			exact -= cdf[n-hi]
		}
		covered := 0
		xs := make([]float64, n)
		for range draws {
			for i := range xs {
				xs[i] = r.ExpFloat64()
			}
			_, ci, _ := Percentile(xs, p, Conf)
			if ci.Lo <= truth && truth <= ci.Hi {
				covered++
			}
		}
		got := float64(covered) / draws
		sd := math.Sqrt(exact * (1 - exact) / draws)
		if got < 0.93 || got > math.Max(0.985, exact+4*sd) || math.Abs(got-exact) > 4*sd {
			t.Errorf("p%v: coverage %.4f over %d draws, exact %.4f", p, got, draws, exact)
		}
		t.Logf("p%v n=%d ranks (%d, %d): coverage %.4f, exact %.4f", p, n, lo, hi, got, exact)
	}
}
