package plot

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// logTicks labels a log axis at the powers of ten and, where fewer than
// two of them fall in its range (a slowdown axis from 1 to 5), at 2 and
// 5 times them too, then at every integer multiple: every axis carries at
// least two labels (within one step of the multiples, its ends). With bytes, labels read 1K, 10K, 1M as the papers
// write flow sizes.
type logTicks struct{ bytes bool }

func (t logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return plot.LogTicks{Prec: -1}.Ticks(lo, hi)
	}
	for _, mults := range [][]float64{{1}, {1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}} {
		var ts []plot.Tick
		labelled := 0
		for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
			base := math.Pow(10, e)
			for m := 1.0; m <= 9; m++ {
				v := m * base
				if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
					continue
				}
				tk := plot.Tick{Value: v}
				for _, k := range mults {
					if m == k {
						tk.Label = t.label(v)
						labelled++
					}
				}
				ts = append(ts, tk)
			}
		}
		if labelled >= 2 {
			return ts
		}
		if len(mults) == 9 {
			// Within one step of a decade's multiples (1.2 to 1.9):
			// label the axis' ends.
			for _, v := range []float64{lo, hi} {
				l := strconv.FormatFloat(v, 'g', 3, 64)
				if t.bytes {
					l = byteLabel(v)
				}
				ts = append(ts, plot.Tick{Value: v, Label: l})
			}
			return ts
		}
	}
	return nil
}

func (t logTicks) label(v float64) string {
	if t.bytes {
		return byteLabel(v)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// drawBesideLegend draws the plot with its legend in a strip to the right
// of it, never over the lines: the plot's area narrows by the legend's
// width (at most 40 % of the figure), and a legend taller than the figure
// gets a smaller font.
func drawBesideLegend(p *plot.Plot, c draw.Canvas) {
	leg := p.Legend
	p.Legend = plot.NewLegend()
	p.Legend.TextStyle = leg.TextStyle
	r := leg.Rectangle(c)
	if r.Max.X-r.Min.X <= 0 {
		p.Draw(c)
		return
	}
	pad := vg.Points(6)
	w, h := c.Max.X-c.Min.X, c.Max.Y-c.Min.Y
	top := p.Title.TextStyle.Rectangle(p.Title.Text).Max.Y + 2*pad
	for leg.TextStyle.Font.Size > vg.Points(6) {
		r = leg.Rectangle(c)
		if r.Max.Y-r.Min.Y <= h-top-pad {
			break
		}
		leg.TextStyle.Font.Size -= vg.Points(1)
	}
	lw := min(r.Max.X-r.Min.X+2*pad, 0.4*w)
	p.Draw(draw.Crop(c, 0, -lw, 0, 0))
	leg.Left, leg.Top, leg.Padding = true, true, vg.Points(2)
	leg.Draw(draw.Crop(c, w-lw+pad, -pad, 0, -top))
}
