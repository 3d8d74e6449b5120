package report

import (
	"strings"
	"testing"
	"time"

	"cclab/analysis/series"
)

// Fairness is defined only on intervals where the same flows (two or
// more) share a bottleneck for the stated time: flows that merely
// overlap, or whose set changes faster, have none.
func TestStableIntervals(t *testing.T) {
	iv := func(a, b int64) Flow { return Flow{active: series.Interval{Start: a, End: b}} }
	fl := []Flow{iv(0, 100), iv(50, 300), iv(60, 70), iv(200, 260)}
	idx := []int{0, 1, 2, 3}
	if got := stableIntervals(fl, idx, 40); len(got) != 1 || got[0].start != 200 || got[0].end != 260 ||
		len(got[0].flows) != 2 || got[0].flows[0] != 1 || got[0].flows[1] != 3 {
		t.Errorf("need 40: %+v, want [200, 260) with flows 1 and 3", got)
	}
	got := stableIntervals(fl, idx, 25)
	if len(got) != 2 || got[0].start != 70 || got[0].end != 100 {
		t.Errorf("need 25: %+v, want [70, 100) and [200, 260)", got)
	}
	if got := stableIntervals(fl, idx, 100); len(got) != 0 {
		t.Errorf("need 100: %+v, want none", got)
	}
}

func TestCoarsen(t *testing.T) {
	w := series.NewWindows[int](0, time.Millisecond)
	for ms := int64(0); ms < 10; ms++ {
		w.Add(1, ms*int64(time.Millisecond), 100)
	}
	c := w.Coarsen(4)
	if c.Width != 4*time.Millisecond {
		t.Fatalf("width %v", c.Width)
	}
	pts := c.Values(1)
	if len(pts) != 3 || pts[0].V != 400 || pts[1].V != 400 || pts[2].V != 200 {
		t.Errorf("coarsened %+v, want 400, 400, 200 bytes", pts)
	}
}

// Time to fairness is judged inside each stable interval: a fair stretch
// at the end of one interval does not count by running on into the next,
// and it must hold for FairHold before its interval ends.
func TestFairnessPerStableInterval(t *testing.T) {
	const ms = int64(time.Millisecond)
	tput := series.NewWindows[wkey](0, time.Millisecond)
	mk := func(id int, start, end int64) Flow {
		return Flow{ID: string(rune('A' + id)), key: wkey{0, id, true}, hasKey: true, BaseRTT: time.Millisecond,
			active: series.Interval{Start: start * ms, End: end * ms}}
	}
	a := &Analysis{Flows: []Flow{mk(0, 0, 40), mk(1, 0, 40), mk(2, 20, 21)}}
	for w := int64(0); w < 40; w++ {
		aBytes, bBytes := uint64(1000), uint64(1000)
		if w < 18 {
			bBytes = 100 // unfair until 18 ms
		}
		tput.Add(wkey{0, 0, true}, w*ms, aBytes)
		tput.Add(wkey{0, 1, true}, w*ms, bBytes)
		if w == 20 {
			tput.Add(wkey{0, 2, true}, w*ms, 1000)
		}
	}
	cfg := Config{FairThreshold: 0.95, FairHold: 10 * time.Millisecond, FairOverlapRTTs: 10}
	g, ok := fairGroup(a, tput, cfg, "b", []int{0, 1, 2})
	if !ok || len(g.Convergence) != 2 {
		t.Fatalf("group %v, convergence %+v: want two stable intervals", ok, g.Convergence)
	}
	if g.Convergence[0].Converged {
		t.Errorf("[0, 20 ms): fair only from 18 ms, yet converged: %+v", g.Convergence[0])
	}
	if c := g.Convergence[1]; !c.Converged || c.After != 0 {
		t.Errorf("[21, 40 ms): fair throughout, got %+v", c)
	}
}

// Jain's window is one RTT of the slowest path: the calibrated RTT where
// it exceeds the configured one (a zero-delay path of 40 us configured
// that the calibration measured at 6 ms gets 6 ms, not the throughput
// window's 1 ms), never below the throughput window, and the analysis
// records the window and the rule that set it.
func TestFairWindowFollowsTheRTT(t *testing.T) {
	const ms = time.Millisecond
	for _, c := range []struct {
		configured, calibrated time.Duration
		factor                 int
		rule                   string
	}{
		{40 * time.Microsecond, 6 * ms, 6, "one RTT: the calibrated RTT (loaded floor), 6ms"},
		{12 * ms, 12300 * time.Microsecond, 12, "one RTT: the calibrated RTT (loaded floor), 12.3ms"},
		{12 * ms, 0, 12, "one RTT: the configured base RTT, 12ms"},
		{40 * time.Microsecond, 300 * time.Microsecond, 1, "the throughput window 1ms: the calibrated RTT (loaded floor) is 300µs, less than it"},
		{0, 0, 1, "the throughput window 1ms"},
	} {
		f, rule := fairWindow(c.configured, c.calibrated, ms)
		if f != c.factor || !strings.HasPrefix(rule, c.rule) {
			t.Errorf("configured %v, calibrated %v: factor %d (%s), want %d (%s)", c.configured, c.calibrated, f, rule, c.factor, c.rule)
		}
	}
	// Two flows at 45.8 and 49.8 Mbit/s on a 40 us path whose calibrated
	// RTT is 6 ms, their bytes arriving in 64 KB bursts: per 1 ms window
	// one flow or the other; per 6 ms window fair.
	tput := series.NewWindows[wkey](0, ms)
	mk := func(id int) Flow {
		return Flow{ID: string(rune('A' + id)), key: wkey{0, id, true}, hasKey: true, BaseRTT: 40 * time.Microsecond,
			active: series.Interval{Start: 0, End: int64(120 * ms)}}
	}
	a := &Analysis{Flows: []Flow{mk(0), mk(1)}}
	for w := int64(0); w < 120; w++ {
		// 45.8 Mbit/s = 5725 B/ms, 49.8 = 6225 B/ms, sent in bursts: flow
		// A in even milliseconds, B in odd ones.
		tput.Add(wkey{0, int(w % 2), true}, w*int64(ms), uint64(map[int64]int{0: 2 * 5725, 1: 2 * 6225}[w%2]))
	}
	fairness(a, tput, Config{FairThreshold: 0.95, FairHold: 10 * ms, FairOverlapRTTs: 10, CalibratedRTT: 6 * ms})
	if a.Config.FairWindowNs != int64(6*ms) || !strings.Contains(a.Config.FairWindowRule, "calibrated") || a.Config.CalibratedRTTNs != int64(6*ms) {
		t.Fatalf("window %v (%s), calibrated %v", time.Duration(a.Config.FairWindowNs), a.Config.FairWindowRule, time.Duration(a.Config.CalibratedRTTNs))
	}
	if len(a.Fairness) != 1 || len(a.Fairness[0].Jain) == 0 {
		t.Fatalf("fairness %+v", a.Fairness)
	}
	for _, p := range a.Fairness[0].Jain {
		if p.Index.F() < 0.99 {
			t.Errorf("window at %v: Jain %v for a 45.8 / 49.8 Mbit/s pair", p.T, p.Index.F())
		}
	}
}
