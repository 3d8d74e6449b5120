// Package plot draws the analysis figures with gonum/plot, in PNG and SVG.
// It takes plain series; what to plot is the report's business.
package plot

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is one named line or set of points.
type Series struct {
	Name   string
	X, Y   []float64
	Dashed bool
	Color  int  // 1-based palette index; 0 picks by position
	Step   bool // draw as a step function (a CDF)
	Marks  bool // mark each point too (few points, e.g. one per bin)
	Dots   bool // markers only, no line (as Chart.Points, for this series)
}

// Chart is one figure.
type Chart struct {
	Title, XLabel, YLabel string
	LogX, LogY            bool
	Points                bool // markers only, no lines
	YMin, YMax            float64
	YFromZero             bool // start the y axis at 0
	XFromZero             bool // start the x axis at 0
	XBytes                bool // label a log x axis in decimal byte units (10K, 1M)
	// Shade fills these spans of the x axis (from, to) behind the lines.
	Shade  [][2]float64
	Series []Series
}

// palette is colour-blind friendly (Okabe-Ito) and distinct in print.
var palette = []color.RGBA{
	{0, 114, 178, 255}, {213, 94, 0, 255}, {0, 158, 115, 255}, {204, 121, 167, 255},
	{230, 159, 0, 255}, {86, 180, 233, 255}, {0, 0, 0, 255}, {240, 228, 66, 255},
}

// Color is the i-th colour of the palette.
func Color(i int) color.RGBA { return palette[i%len(palette)] }

// Render draws c as format ("png" or "svg") at the given size in inches.
func Render(c Chart, format string, width, height float64) ([]byte, error) {
	return render(c, format, width, height, true)
}

// render draws c; unthinned, every point in one stroke per line (the
// tests' reference picture).
func render(c Chart, format string, width, height float64, thinned bool) ([]byte, error) {
	p, err := build(c, width, thinned)
	if err != nil {
		return nil, err
	}
	wt, err := draw.NewFormattedCanvas(vg.Length(width)*vg.Inch, vg.Length(height)*vg.Inch, format)
	if err != nil {
		return nil, fmt.Errorf("plot %q: %w", c.Title, err)
	}
	drawBesideLegend(p, draw.New(wt))
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("plot %q: %w", c.Title, err)
	}
	return buf.Bytes(), nil
}

// build lays c out as a gonum plot, its legend not yet placed.
func build(c Chart, width float64, thinned bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = c.Title
	p.X.Label.Text = c.XLabel
	p.Y.Label.Text = c.YLabel
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.X.Label.TextStyle.Font.Size = vg.Points(11)
	p.Y.Label.TextStyle.Font.Size = vg.Points(11)
	if c.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks{bytes: c.XBytes}
	}
	if c.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
	}
	if len(c.Shade) > 0 {
		p.Add(shade{spans: c.Shade})
	}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	drawn := 0
	for i, s := range c.Series {
		xy := make(plotter.XYs, 0, len(s.X))
		for j := range s.X {
			x, y := s.X[j], s.Y[j]
			if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) ||
				(c.LogX && x <= 0) || (c.LogY && y <= 0) {
				continue
			}
			xy = append(xy, plotter.XY{X: x, Y: y})
		}
		if len(xy) == 0 {
			continue
		}
		if thinned && !c.Points && !s.Dots && !s.Marks && !c.LogX {
			xy = thin(xy, int(2*width*dpi))
		}
		drawn++
		col := Color(i)
		if s.Color > 0 {
			col = Color(s.Color - 1)
		}
		if c.Points || s.Dots {
			sc, err := dots(xy, col, draw.CircleGlyph{})
			if err != nil {
				return nil, fmt.Errorf("plot %q: %w", c.Title, err)
			}
			p.Add(sc)
			p.Legend.Add(s.Name, sc)
			continue
		}
		var l *plotter.Line
		parts := []plotter.XYs{xy}
		if thinned {
			parts = strokes(xy, s.Dashed)
		}
		for _, part := range parts {
			pl, err := plotter.NewLine(part)
			if err != nil {
				return nil, fmt.Errorf("plot %q: %w", c.Title, err)
			}
			pl.LineStyle.Color = col
			pl.LineStyle.Width = vg.Points(1.5)
			if s.Step {
				pl.StepStyle = plotter.PostStep
			}
			if s.Dashed {
				pl.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			}
			p.Add(pl)
			if l == nil {
				l = pl
			}
		}
		var thumb []plot.Thumbnailer
		thumb = append(thumb, l)
		if s.Marks {
			var shape draw.GlyphDrawer = draw.CircleGlyph{}
			if s.Dashed {
				shape = draw.RingGlyph{}
			}
			sc, err := dots(xy, col, shape)
			if err != nil {
				return nil, fmt.Errorf("plot %q: %w", c.Title, err)
			}
			p.Add(sc)
			thumb = append(thumb, sc)
		}
		if s.Name != "" {
			p.Legend.Add(s.Name, thumb...)
		}
	}
	if drawn == 0 {
		return nil, fmt.Errorf("plot %q: no data", c.Title)
	}
	if c.YMax > c.YMin {
		p.Y.Min, p.Y.Max = c.YMin, c.YMax
	}
	// A log axis over one value (a run with one flow): gonum widens an
	// empty range by one on each side, below zero, where a log scale
	// panics. A factor of two each way instead.
	if c.LogX && p.X.Min == p.X.Max {
		p.X.Min, p.X.Max = p.X.Min/2, p.X.Max*2
	}
	if c.LogY && p.Y.Min == p.Y.Max {
		p.Y.Min, p.Y.Max = p.Y.Min/2, p.Y.Max*2
	}
	if c.XFromZero && !c.LogX {
		p.X.Min = 0
		p.X.Max *= 1.03
	}
	if c.YFromZero && !c.LogY {
		p.Y.Min = 0
		p.Y.Max *= 1.05
	}
	return p, nil
}

// dpi is the raster resolution gonum/plot draws PNGs at (vgimg's default).
const dpi = 96

// thin keeps, of a line whose x never decreases, the first, last, lowest
// and highest point of each of n equal slices of its x range (M4
// aggregation, Jugel et al., VLDB 2014): drawn at no more than n pixel
// columns the line is the same picture, and a 13 s queue series sampled
// every 100 us no longer takes seconds to rasterise. Other lines are kept
// whole.
func thin(xy plotter.XYs, n int) plotter.XYs {
	if n < 1 || len(xy) <= 4*n {
		return xy
	}
	for i := 1; i < len(xy); i++ {
		if xy[i].X < xy[i-1].X {
			return xy
		}
	}
	x0, span := xy[0].X, xy[len(xy)-1].X-xy[0].X
	if span <= 0 {
		return xy
	}
	out := make(plotter.XYs, 0, 4*n+1)
	for start := 0; start < len(xy); {
		col := min(int(float64(n)*(xy[start].X-x0)/span), n-1)
		end, lo, hi := start, start, start
		for end < len(xy) && min(int(float64(n)*(xy[end].X-x0)/span), n-1) == col {
			if xy[end].Y < xy[lo].Y {
				lo = end
			}
			if xy[end].Y > xy[hi].Y {
				hi = end
			}
			end++
		}
		// In x order, each index once.
		keep := []int{start, lo, hi, end - 1}
		slices.Sort(keep)
		for i, k := range keep {
			if i == 0 || k != keep[i-1] {
				out = append(out, xy[k])
			}
		}
		start = end
	}
	return out
}

// strokeLen is the most points one stroke of a line carries. The
// rasteriser keeps a list of the cells each pixel row crosses and walks it
// for every new cell, so one long zigzag (a throughput series read in 1 ms
// windows) costs time quadratic in its length; strokes of strokeLen
// points, each starting where the last ended, draw the same line.
const strokeLen = 128

// strokes cuts a line into strokes of at most strokeLen points sharing
// their end points; a dashed line stays whole, so that its dashes do not
// restart at every cut.
func strokes(xy plotter.XYs, dashed bool) []plotter.XYs {
	if dashed || len(xy) <= strokeLen {
		return []plotter.XYs{xy}
	}
	var out []plotter.XYs
	for i := 0; i < len(xy)-1; i += strokeLen - 1 {
		out = append(out, xy[i:min(i+strokeLen, len(xy))])
	}
	return out
}

func byteLabel(v float64) string {
	for _, u := range []struct {
		div  float64
		unit string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "K"}} {
		if v >= u.div {
			return strconv.FormatFloat(v/u.div, 'g', 3, 64) + u.unit
		}
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// dots is a series drawn as points of one colour and shape.
func dots(xy plotter.XYer, col color.Color, shape draw.GlyphDrawer) (*plotter.Scatter, error) {
	sc, err := plotter.NewScatter(xy)
	if err != nil {
		return nil, err
	}
	sc.GlyphStyle.Color = col
	sc.GlyphStyle.Radius = vg.Points(2.5)
	sc.GlyphStyle.Shape = shape
	return sc, nil
}
