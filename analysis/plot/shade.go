package plot

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// shadeColor is a light grey that every line stays readable over.
var shadeColor = color.RGBA{225, 225, 225, 255}

// shade fills spans of the x axis over the whole height, behind the
// lines: times when something held (a circuit was up).
type shade struct{ spans [][2]float64 }

// Plot implements plot.Plotter. It leaves the axes' ranges to the data.
func (s shade) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, _ := plt.Transforms(&c)
	for _, sp := range s.spans {
		x0, x1 := trX(max(sp[0], plt.X.Min)), trX(min(sp[1], plt.X.Max))
		if x1 <= x0 {
			continue
		}
		c.FillPolygon(shadeColor, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
	}
}
