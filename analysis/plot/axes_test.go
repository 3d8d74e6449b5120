package plot

import (
	"math"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// Every log axis carries at least two labels: powers of ten where the
// range spans them, then 2 and 5 times them, then every multiple.
func TestLogTicksLabelled(t *testing.T) {
	labels := func(ts logTicks, lo, hi float64) []string {
		var out []string
		for _, tk := range ts.Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	for _, tc := range []struct {
		lo, hi float64
		want   int
	}{{1, 1000, 4}, {1.1, 4.9, 3}, {1, 1.8, 2}, {0.9, 30, 2}, {1.2, 1.9, 2}} {
		got := labels(logTicks{}, tc.lo, tc.hi)
		if len(got) < 2 && tc.want >= 2 {
			t.Errorf("[%v, %v]: labels %v", tc.lo, tc.hi, got)
		}
		if tc.want > 0 && len(got) < tc.want {
			t.Errorf("[%v, %v]: labels %v, want at least %d", tc.lo, tc.hi, got, tc.want)
		}
	}
	if got := labels(logTicks{}, 1, 1000); len(got) != 4 || got[0] != "1" || got[3] != "1000" {
		t.Errorf("decades: %v", got)
	}
	if got := labels(logTicks{bytes: true}, 1e3, 1e6); len(got) != 4 || got[1] != "10K" || got[3] != "1M" {
		t.Errorf("bytes: %v", got)
	}
}

// The legend is drawn right of the plot's area: every legend text starts
// right of every data line, however the lines fill the plot.
func TestLegendBesideTheLines(t *testing.T) {
	var xs, ys, ys2 []float64
	for i := range 200 {
		xs = append(xs, float64(i))
		ys = append(ys, 100)                            // along the top, where a legend would sit
		ys2 = append(ys2, 50+50*math.Sin(float64(i)/5)) // across the whole area
	}
	c := Chart{Title: "t", XLabel: "x", YLabel: "y", Series: []Series{{Name: "top line", X: xs, Y: ys}, {Name: "wave", X: xs, Y: ys2}}}
	p, err := build(c, 6, false)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder.Canvas{}
	drawBesideLegend(p, draw.NewCanvas(rec, 6*vg.Inch, 3.5*vg.Inch))
	lineMax, textMin := vg.Length(math.Inf(-1)), vg.Length(math.Inf(1))
	texts := 0
	for _, a := range rec.Actions {
		switch a := a.(type) {
		case *recorder.Stroke:
			for _, c := range a.Path {
				if len(a.Path) > 100 { // the data lines, not ticks or grid
					lineMax = max(lineMax, c.Pos.X)
				}
			}
		case *recorder.FillString:
			if a.String == "top line" || a.String == "wave" {
				texts++
				textMin = min(textMin, a.Point.X)
			}
		}
	}
	if texts != 2 || !(textMin > lineMax) {
		t.Errorf("legend texts %d from x = %v; lines reach x = %v", texts, textMin, lineMax)
	}
}
