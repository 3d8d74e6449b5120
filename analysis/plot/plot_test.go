package plot

import (
	"bytes"
	"image/png"
	"strings"
	"testing"
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
