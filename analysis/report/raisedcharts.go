package report

import (
	"fmt"
	"strings"
	"time"

	"cclab/analysis/metrics"
	"cclab/analysis/plot"
)

// rateBin is the width the raised links' transmit rate is averaged over.
// The switch counts a port's transmitted bytes where the next switch
// receives them, in the batches the kernel's softirq hands packets over
// in: per 100 us queue sample, and even per millisecond, a 400 Mbit/s
// port's rate swings between 0 and 2 Gbit/s (experiments/reproduce/
// powertcp-rdcn.yaml, 2026-11-28); about a base RTT of the suite's
// fabrics evens that out.
const rateBin = 5 * time.Millisecond

// raisedCharts draws what the links the run's events raised (a circuit's
// days, LinkWindows) transmitted, over the run and around the first day,
// and shades the windows in every time series of charts. Without windows
// both charts are empty (not drawn).
func (a *Analysis) raisedCharts(charts []plot.Chart) []plot.Chart {
	whole := plot.Chart{Title: fmt.Sprintf("Transmit rate of the links the run's events raised (mean per %v; shaded: raised)", rateBin),
		XLabel: "time (ms)", YLabel: "Mbit/s", YFromZero: true}
	day := whole
	day.Title = "The same around the first window"
	if len(a.LinkWindows) == 0 {
		return []plot.Chart{whole, day}
	}
	var spans [][2]float64
	for _, w := range a.LinkWindows {
		spans = append(spans, [2]float64{ms(w.Start), ms(w.End)})
	}
	for i := range charts {
		if charts[i].XLabel == "time (ms)" {
			charts[i].Shade = spans
		}
	}
	whole.Shade, day.Shade = spans, spans
	first := a.LinkWindows[0]
	from, to := first.Start-(first.End-first.Start), first.End+2*(first.End-first.Start)
	col := 1
	for _, q := range a.Queues {
		if !raised(a.LinkWindows, q.Port.Node, q.Port.Iface) {
			continue
		}
		w := plot.Series{Name: q.Port.String(), Color: col}
		d := plot.Series{Name: q.Port.String(), Color: col}
		for _, p := range binRate(q.TxRate, rateBin) {
			w.X, w.Y = append(w.X, ms(p.T)), append(w.Y, p.V/1e6)
			if p.T >= from && p.T <= to {
				d.X, d.Y = append(d.X, ms(p.T)), append(d.Y, p.V/1e6)
			}
		}
		whole.Series, day.Series = append(whole.Series, w), append(day.Series, d)
		col++
	}
	return []plot.Chart{whole, day}
}

// raised reports whether port node/iface is an end of a raised link.
func raised(ws []LinkWindow, node, iface string) bool {
	for _, w := range ws {
		for _, l := range w.Links {
			a, b, ok := strings.Cut(l, ":")
			if !ok {
				a, b, _ = strings.Cut(l, ">")
			}
			if (node == a && iface == b) || (node == b && iface == a) {
				return true
			}
		}
	}
	return false
}

// binRate averages a rate series (each point the rate since the previous
// one) over bins of width: the bits of each interval go to the bin its
// end falls in; a point per bin, at the bin's end.
func binRate(rate []metrics.Point, width time.Duration) []metrics.Point {
	var out []metrics.Point
	var bits float64
	var bin time.Duration = -1
	for i := 1; i < len(rate); i++ {
		b := rate[i].T / width
		if bin >= 0 && b != bin {
			out = append(out, metrics.Point{T: (bin + 1) * width, V: bits / width.Seconds()})
			bits = 0
		}
		bin = b
		bits += rate[i].V * (rate[i].T - rate[i-1].T).Seconds()
	}
	if bin >= 0 {
		out = append(out, metrics.Point{T: (bin + 1) * width, V: bits / width.Seconds()})
	}
	return out
}
