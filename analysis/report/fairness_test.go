package report

import (
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
