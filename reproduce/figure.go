package reproduce

import (
	"fmt"
	"math"

	"cclab/analysis/plot"
)

// paperFigure draws an experiment's claims that carry a paper number: for
// each (x = its place among them, as in the claims table) every seed's
// number over the paper's, on a log axis, with the agreement band [1/2, 2]
// around 1 (the paper). Degraded seeds are drawn apart. Nil when no claim
// has a paper number or none was measured.
func paperFigure(o *Outcome) ([]byte, error) {
	var faithful, degraded plot.Series
	faithful.Name, degraded.Name = "faithful seeds", "degraded seeds (not counted)"
	faithful.Color, degraded.Color = 1, 2
	faithful.Dots, degraded.Dots = true, true
	n := 0
	for _, c := range o.Claims {
		if c.Paper.Value == nil || *c.Paper.Value <= 0 {
			continue
		}
		n++
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
	band := func(name string, y float64, col int) plot.Series {
		return plot.Series{Name: name, X: []float64{0.5, float64(n) + 0.5}, Y: []float64{y, y}, Dashed: y != 1, Color: col}
	}
	chart := plot.Chart{
		Title:  fmt.Sprintf("%s: measured / paper, claims with the paper's number", o.Name),
		XLabel: "claim (numbered claims, in the table's order)", YLabel: "measured / paper (log)",
		LogY: true, YMin: 0.05, YMax: 20,
		Series: []plot.Series{band("paper", 1, 7), band("2x", 2, 3), band("1/2x", 0.5, 3), faithful, degraded},
	}
	return plot.Render(chart, "png", 6, 3.5)
}
