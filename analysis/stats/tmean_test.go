package stats

import (
	"math"
	"testing"
)

func TestTQuantileTable(t *testing.T) {
	// t_{0.975, df} from printed tables (three decimals).
	for _, c := range []struct{ df, want float64 }{
		{1, 12.706}, {2, 4.303}, {3, 3.182}, {4, 2.776}, {5, 2.571}, {10, 2.228}, {30, 2.042}, {100, 1.984},
	} {
		if got := tQuantile(0.975, c.df); math.Abs(got-c.want) > 0.0005 {
			t.Errorf("t(0.975, %v) = %.5f, want %.3f", c.df, got, c.want)
		}
	}
	// Closed forms: df 1 is Cauchy, tan(pi (P - 1/2)); df 2 is
	// (2P - 1) / sqrt(2 P (1 - P)).
	for _, P := range []float64{0.01, 0.2, 0.5, 0.75, 0.9, 0.995, 0.9995} {
		if got, want := tQuantile(P, 1), math.Tan(math.Pi*(P-0.5)); math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("t(%v, 1) = %v, want %v", P, got, want)
		}
		if got, want := tQuantile(P, 2), (2*P-1)/math.Sqrt(2*P*(1-P)); math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("t(%v, 2) = %v, want %v", P, got, want)
		}
	}
	// Many degrees of freedom: the normal quantile 1.959964.
	if got := tQuantile(0.975, 1e6); math.Abs(got-1.959964) > 1e-5 {
		t.Errorf("t(0.975, 1e6) = %v, want 1.959964", got)
	}
}

func TestMeanCI(t *testing.T) {
	// 1..5: mean 3, s^2 = 10/4, se = sqrt(2.5/5); t(0.975, 4) = 2.7764451.
	est, ci, n := MeanCI([]float64{3, 1, math.NaN(), 5, 2, 4}, Conf)
	h := 2.7764451 * math.Sqrt(0.5)
	if n != 5 || est != 3 || math.Abs(ci.Lo-(3-h)) > 1e-6 || math.Abs(ci.Hi-(3+h)) > 1e-6 {
		t.Errorf("1..5: %v %v n=%d, want 3 (%.6f, %.6f) n=5", est, ci, n, 3-h, 3+h)
	}
	// 90 %: t(0.95, 4) = 2.1318468.
	_, ci, _ = MeanCI([]float64{1, 2, 3, 4, 5}, 0.9)
	if h := 2.1318468 * math.Sqrt(0.5); math.Abs(ci.Hi-(3+h)) > 1e-6 {
		t.Errorf("1..5 at 90 %%: %v, want 3 +- %.6f", ci, h)
	}
	est, ci, n = MeanCI([]float64{7}, Conf)
	if est != 7 || n != 1 || ci != unbounded() {
		t.Errorf("one value: %v %v %d", est, ci, n)
	}
	est, ci, n = MeanCI(nil, Conf)
	if !math.IsNaN(est) || n != 0 || ci != unbounded() {
		t.Errorf("no values: %v %v %d", est, ci, n)
	}
}
