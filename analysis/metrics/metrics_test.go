package metrics

import (
	"math"
	"testing"
	"time"
)

func TestPercentileNearestRank(t *testing.T) {
	var v []float64
	for i := 1; i <= 1000; i++ {
		v = append(v, float64(i))
	}
	for _, c := range []struct{ p, want float64 }{{50, 500}, {95, 950}, {99, 990}, {99.9, 999}, {100, 1000}, {0.01, 1}} {
		if got := Percentile(v, c.p); got != c.want {
			t.Errorf("p%v of 1..1000 = %v, want %v", c.p, got, c.want)
		}
	}
	small := []float64{1, 2, 3, 4, 5}
	if Percentile(small, 50) != 3 || Percentile(small, 99.9) != 5 || Percentile(small, 20) != 1 || Percentile(small, 21) != 2 {
		t.Error("nearest rank on 5 values wrong")
	}
	if !math.IsNaN(Percentile(nil, 50)) {
		t.Error("percentile of nothing should be NaN")
	}
	s := Summarize([]float64{4, 1, 3, 2})
	if s.N != 4 || s.Mean != 2.5 || s.P50 != 2 || s.Max != 4 {
		t.Errorf("summary %+v", s)
	}
}

func TestJainOfKnownShares(t *testing.T) {
	if j := Jain([]float64{5, 5, 5, 5}); j != 1 {
		t.Errorf("equal shares: %v", j)
	}
	for n := 2; n <= 10; n++ {
		shares := make([]float64, n)
		shares[0] = 7
		if j := Jain(shares); math.Abs(j-1/float64(n)) > 1e-12 {
			t.Errorf("one of %d hogging: %v, want %v", n, j, 1/float64(n))
		}
	}
	// Two flows at 3:1 -> 16 / (2 * 10) = 0.8.
	if j := Jain([]float64{3, 1}); math.Abs(j-0.8) > 1e-12 {
		t.Errorf("3:1 -> %v, want 0.8", j)
	}
	if !math.IsNaN(Jain([]float64{0, 0})) || !math.IsNaN(Jain(nil)) {
		t.Error("all-zero shares should be undefined")
	}
}

func TestTimeToFairness(t *testing.T) {
	ms := time.Millisecond
	s := []Point{{0, 0.5}, {ms, 0.96}, {2 * ms, 0.9}, {3 * ms, 0.95}, {4 * ms, 0.99}, {5 * ms, 0.97}, {6 * ms, 0.96}}
	if at, ok := TimeToFairness(s, 0, 0.95, 2*ms); !ok || at != 3*ms {
		t.Errorf("got %v %v, want 3ms", at, ok)
	}
	if _, ok := TimeToFairness(s, 0, 0.95, 4*ms); ok {
		t.Error("a hold longer than the series succeeded")
	}
	if at, ok := TimeToFairness(s, 4*ms, 0.95, ms); !ok || at != 4*ms {
		t.Errorf("from 4ms: %v %v", at, ok)
	}
	s[4].V = math.NaN()
	if at, ok := TimeToFairness(s, 0, 0.95, ms); !ok || at != 5*ms {
		t.Errorf("NaN must break the hold: %v %v", at, ok)
	}
}

func TestBins(t *testing.T) {
	var samples []Sample
	for i := 1; i <= 100; i++ {
		samples = append(samples, Sample{Size: uint64(i) * 1000, Slowdown: float64(i)})
	}
	samples = append(samples, Sample{Size: 50_000_000, Slowdown: 500})
	fixed := FixedBins(samples, PowerTCPEdges)
	if len(fixed) != len(PowerTCPEdges)+1 {
		t.Fatalf("%d fixed bins", len(fixed))
	}
	// <=5K holds 1K..5K: slowdowns 1..5.
	if b := fixed[0]; b.Label != "<=5K" || b.Summary.N != 5 || b.Summary.Max != 5 || b.Summary.P50 != 3 {
		t.Errorf("first bin %+v", b)
	}
	if b := fixed[6]; b.Label != "<=100K" || b.Summary.N != 25 || b.Low != 75_000 {
		t.Errorf("100K bin %+v", b)
	}
	if b := fixed[len(fixed)-1]; b.Label != ">30M" || b.Summary.N != 1 || b.Summary.P50 != 500 {
		t.Errorf("overflow bin %+v", b)
	}
	if fixed[len(fixed)-2].Summary.N != 0 {
		t.Error("empty bin not kept empty")
	}
	eq := EqualCountBins(samples[:100], 5)
	if len(eq) != 20 {
		t.Fatalf("%d equal-count bins", len(eq))
	}
	for i, b := range eq {
		if b.Summary.N != 5 || b.High != uint64(5*(i+1))*1000 {
			t.Errorf("bin %d %+v", i, b)
		}
	}
	sl := SplitShortLong(samples, DefaultClasses)
	if sl.Short.N != 9 || sl.Long.N != 1 || sl.All.N != 101 {
		t.Errorf("short/long %+v", sl)
	}
}
