package reproduce

import (
	"fmt"
	"math"

	"cclab/analysis/plot"
)

// paperFigure draws an experiment's claims that carry a paper number: for
// each (x = its place among them) every seed's number and the pooled
// number with its 95 % interval over the paper's, on a log axis, with the
// claim's own band (short bars at its edges) around 1 (the paper).
// Degraded seeds are drawn apart. Nil when no claim
// has a paper number or none was measured.
func paperFigure(o *Outcome) ([]byte, error) {
	var faithful, degraded plot.Series
	faithful.Name, degraded.Name = "faithful seeds", "degraded seeds (not counted)"
	faithful.Color, degraded.Color = 1, 2
	faithful.Dots, degraded.Dots = true, true
	pooled := plot.Series{Name: "pooled, 95 % interval", Color: 6, Marks: true}
	var intervals, bands []plot.Series
	clamp := func(r float64) float64 { return math.Max(1e-3, math.Min(1e3, r)) }
	n := 0
	for _, c := range o.Claims {
		if c.Paper.Value == nil || *c.Paper.Value <= 0 {
			continue
		}
		n++
		// The claim's own band, over the paper's number: a bar each side
		// it has.
		for _, edge := range c.BandEdges {
			if e := float64(edge) / *c.Paper.Value; e > 0 && !math.IsInf(e, 0) && !math.IsNaN(e) {
				bands = append(bands, plot.Series{X: []float64{float64(n) - 0.3, float64(n) + 0.3}, Y: []float64{clamp(e), clamp(e)}, Color: 3})
			}
		}
		if est := float64(c.Value) / *c.Paper.Value; est > 0 && !math.IsInf(est, 0) {
			pooled.X, pooled.Y = append(pooled.X, float64(n)+0.15), append(pooled.Y, clamp(est))
			lo, hi := float64(c.CI[0]) / *c.Paper.Value, float64(c.CI[1]) / *c.Paper.Value
			if !math.IsNaN(lo) && !math.IsNaN(hi) {
				intervals = append(intervals, plot.Series{X: []float64{float64(n) + 0.15, float64(n) + 0.15},
					Y: []float64{clamp(math.Max(lo, 1e-9)), clamp(hi)}, Color: 6})
			}
		}
		for _, s := range c.Seeds {
			r := float64(s.Value) / *c.Paper.Value
			if math.IsNaN(r) || math.IsInf(r, 0) || r <= 0 {
				continue
			}
			r = math.Max(1e-3, math.Min(1e3, r))
			if s.Faithful {
				faithful.X, faithful.Y = append(faithful.X, float64(n)), append(faithful.Y, r)
			} else {
				degraded.X, degraded.Y = append(degraded.X, float64(n)), append(degraded.Y, r)
			}
		}
	}
	if len(faithful.X)+len(degraded.X) == 0 {
		return nil, nil
	}
	if len(bands) > 0 {
		bands[0].Name = "band of agreement"
	}
	band := func(name string, y float64, col int) plot.Series {
		return plot.Series{Name: name, X: []float64{0.5, float64(n) + 0.5}, Y: []float64{y, y}, Dashed: y != 1, Color: col}
	}
	chart := plot.Chart{
		Title:  fmt.Sprintf("%s: measured / paper, claims with the paper's number", o.Name),
		XLabel: "claim (numbered claims, in the table's order)", YLabel: "measured / paper (log)",
		LogY: true, YMin: 0.05, YMax: 20,
		Series: append(append([]plot.Series{band("paper", 1, 7), faithful, degraded, pooled}, intervals...), bands...),
	}
	return plot.Render(chart, "png", 6, 3.5)
}
