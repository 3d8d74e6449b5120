package plot

import (
	"bytes"
	"image/color"
	"image/png"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"
)

func TestRenderPNGAndSVG(t *testing.T) {
	c := Chart{Title: "slowdown", XLabel: "size", YLabel: "x", LogX: true, Series: []Series{
		{Name: "a", X: []float64{1e3, 1e4, 1e5, 0}, Y: []float64{1, 2, 3, 4}},
		{Name: "b", X: []float64{1e3, 1e5}, Y: []float64{2, 5}, Dashed: true},
	}}
	b, err := Render(c, "png", 6, 4)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() < 400 {
		t.Fatalf("png %v", img.Bounds())
	}
	s, err := Render(c, "svg", 6, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(s), "<svg") || !strings.Contains(string(s), "slowdown") {
		t.Fatal("svg has no title")
	}
	if byteLabel(1e4) != "10K" || byteLabel(3e7) != "30M" || byteLabel(500) != "500" {
		t.Fatalf("byte labels %s %s %s", byteLabel(1e4), byteLabel(3e7), byteLabel(500))
	}
	if _, err := Render(Chart{Title: "empty", LogY: true, Series: []Series{{X: []float64{1}, Y: []float64{0}}}}, "png", 4, 3); err == nil {
		t.Fatal("a chart with nothing drawable rendered")
	}
}

// zigzag is a queue-like series: n samples 100 us apart, jumping between
// a noisy floor and bursts, as a port sampled through an incast.
func zigzag(n int, seed int64) Series {
	r := rand.New(rand.NewSource(seed))
	s := Series{Name: "q", X: make([]float64, n), Y: make([]float64, n)}
	for i := range n {
		s.X[i] = float64(i) * 0.1
		s.Y[i] = r.Float64() * 20
		if r.Intn(50) == 0 {
			s.Y[i] = 300 + r.Float64()*300
		}
	}
	return s
}

// Thinned to four points per slice of the x range, a 130 000-point line
// keeps its first, last, lowest and highest points; and a dense zigzag,
// thinned and cut into strokes, draws the picture the whole line draws:
// the pixels that differ are antialiasing shades at the edges of columns
// the line crosses many times (about 1 % of the image when written).
func TestThinnedLineDrawsTheSame(t *testing.T) {
	s := zigzag(130000, 1)
	xy := make(plotter.XYs, len(s.X))
	for i := range s.X {
		xy[i] = plotter.XY{X: s.X[i], Y: s.Y[i]}
	}
	th := thin(xy, 1000)
	if len(th) > 4000 || len(th) < 1000 {
		t.Fatalf("thinned to %d points, want 1000-4000", len(th))
	}
	if th[0] != xy[0] || th[len(th)-1] != xy[len(xy)-1] {
		t.Fatalf("ends %v %v, want %v %v", th[0], th[len(th)-1], xy[0], xy[len(xy)-1])
	}
	lo, hi := xy[0].Y, xy[0].Y
	for _, p := range xy {
		lo, hi = min(lo, p.Y), max(hi, p.Y)
	}
	tlo, thi := th[0].Y, th[0].Y
	for i, p := range th {
		tlo, thi = min(tlo, p.Y), max(thi, p.Y)
		if i > 0 && p.X < th[i-1].X {
			t.Fatalf("point %d goes back in x", i)
		}
	}
	if tlo != lo || thi != hi {
		t.Fatalf("thinned range %v-%v, whole %v-%v", tlo, thi, lo, hi)
	}
	if got := thin(xy[:3000], 1000); len(got) != 3000 {
		t.Fatalf("a line of 3000 points at 1000 slices was thinned to %d", len(got))
	}
	back := slices.Clone(xy[:5000])
	back[10].X = -1
	if got := thin(back, 100); len(got) != len(back) {
		t.Fatal("a line going back in x was thinned")
	}

	// Drawn whole, a longer line takes seconds (quadratic in its length).
	c := Chart{Title: "queue", XLabel: "ms", YLabel: "KB", Series: []Series{zigzag(12000, 2)}}
	thinPNG, err := render(c, "png", 7, 4, true)
	if err != nil {
		t.Fatal(err)
	}
	wholePNG, err := render(c, "png", 7, 4, false)
	if err != nil {
		t.Fatal(err)
	}
	a, err := png.Decode(bytes.NewReader(thinPNG))
	if err != nil {
		t.Fatal(err)
	}
	b, err := png.Decode(bytes.NewReader(wholePNG))
	if err != nil {
		t.Fatal(err)
	}
	if a.Bounds() != b.Bounds() {
		t.Fatalf("bounds %v and %v", a.Bounds(), b.Bounds())
	}
	differ, total := 0, 0
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			total++
			if colourDistance(a.At(x, y), b.At(x, y)) > 64 {
				differ++
			}
		}
	}
	t.Logf("%d of %d pixels differ by more than 64 of 255", differ, total)
	if differ*40 > total {
		t.Fatalf("%d of %d pixels differ (more than 2.5 %%)", differ, total)
	}
}

// A long line drawn in strokes covers the same pixels as one stroke, and
// a dashed line stays one stroke.
func TestStrokesShareEnds(t *testing.T) {
	xy := make(plotter.XYs, 1000)
	for i := range xy {
		xy[i] = plotter.XY{X: float64(i), Y: float64(i % 7)}
	}
	parts := strokes(xy, false)
	n := 0
	for i, p := range parts {
		if len(p) > strokeLen {
			t.Fatalf("stroke %d has %d points", i, len(p))
		}
		if i > 0 && p[0] != parts[i-1][len(parts[i-1])-1] {
			t.Fatalf("stroke %d starts at %v, the last ended at %v", i, p[0], parts[i-1][len(parts[i-1])-1])
		}
		n += len(p) - 1
	}
	if n != len(xy)-1 || parts[0][0] != xy[0] || parts[len(parts)-1][len(parts[len(parts)-1])-1] != xy[len(xy)-1] {
		t.Fatalf("strokes cover %d segments of %d", n, len(xy)-1)
	}
	if d := strokes(xy, true); len(d) != 1 || len(d[0]) != len(xy) {
		t.Fatal("a dashed line was cut")
	}
}

func colourDistance(a, b color.Color) int {
	ar, ag, ab, _ := a.RGBA()
	br, bg, bb, _ := b.RGBA()
	d := func(x, y uint32) int {
		if x > y {
			return int(x-y) >> 8
		}
		return int(y-x) >> 8
	}
	return d(ar, br) + d(ag, bg) + d(ab, bb)
}

// One value on log axes (a run of one flow: its FCT CDF) draws, around
// the value.
func TestLogAxesOverOneValue(t *testing.T) {
	c := Chart{Title: "FCT CDF", LogX: true, LogY: true, Series: []Series{{Name: "a", X: []float64{0.378}, Y: []float64{1}, Step: true}}}
	b, err := Render(c, "svg", 6, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "<svg") {
		t.Fatal("no svg")
	}
}
