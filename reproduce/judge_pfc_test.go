package reproduce

import (
	"math"
	"testing"
)

// hpcc-pfc-incast's claims on pause counts: "no pause" (at most 0) agrees
// when every run paused nothing (a spread of zero is an interval of one
// point), is not an agreement when one run paused; and a run without a
// pause record (lossy: the count is NaN, not 0) leaves the claim not
// measurable (the runs lack the number), so lossy runs can never pass for
// "no pause".
func TestPauseCountClaims(t *testing.T) {
	none := ClaimSpec{ID: "none", Statistic: "mean", N: 3, Band: "limit",
		Value: &ValueCheck{CC: "a", Metric: "pfc_pauses", Bound: "at_most", Limit: fp(0)}}
	spread := ClaimSpec{ID: "spread", Statistic: "mean", N: 3, Band: "limit",
		Value: &ValueCheck{CC: "a", Metric: "pfc_spread_hops", Bound: "at_least", Limit: fp(2)}}
	e := &Experiment{Name: "x", Compare: []string{"a"}, measure: mustMeasure("lossless"), Spec: Spec{Claims: []ClaimSpec{none, spread}}}
	run := func(seed int64, pauses, hops float64) RunOutcome {
		return RunOutcome{Seed: seed, Variants: []VariantOutcome{{CC: "a", Status: "ran", Fidelity: "faithful",
			Metrics: Metrics{"pfc_pauses": pauses, "pfc_spread_hops": hops}}}}
	}
	for _, tc := range []struct {
		name       string
		runs       []RunOutcome
		none, hops string
	}{
		{"no pause anywhere", []RunOutcome{run(1, 0, 0), run(2, 0, 0), run(3, 0, 0)}, Agrees, Disagrees},
		{"one run paused", []RunOutcome{run(1, 0, 0), run(2, 4, 1), run(3, 0, 0)}, Inconclusive, Disagrees},
		{"pauses spread 2-3 hops", []RunOutcome{run(1, 40, 3), run(2, 35, 3), run(3, 52, 3)}, Disagrees, Agrees},
		{"lossy runs", []RunOutcome{run(1, math.NaN(), math.NaN()), run(2, math.NaN(), math.NaN()), run(3, math.NaN(), math.NaN())}, NotMeasurable, NotMeasurable},
	} {
		o := &Outcome{Runs: tc.runs}
		judge(e, o)
		if got := o.Claims[0].Verdict; got != tc.none {
			t.Errorf("%s: no pause %s (value %v, interval %v), want %s", tc.name, got, o.Claims[0].Value, o.Claims[0].CI, tc.none)
		}
		if got := o.Claims[1].Verdict; got != tc.hops {
			t.Errorf("%s: spread %s (value %v, interval %v), want %s", tc.name, got, o.Claims[1].Value, o.Claims[1].CI, tc.hops)
		}
	}
}
