package report

import (
	"fmt"
	"sort"
	"time"

	"cclab/analysis/plot"
	"cclab/analysis/series"
)

// Figure is one rendered chart.
type Figure struct {
	Name    string // file stem
	Caption string
	PNG     []byte
	SVG     []byte
}

// maxLines keeps per-flow and per-socket figures readable; the CSVs hold
// every series.
const maxLines = 12

// maxPoints caps each law's points in a scatter.
const maxPoints = 3000

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// Charts lists the figures of an analysis (those with data).
func (a *Analysis) Charts() []plot.Chart {
	var out []plot.Chart
	// Slowdown vs flow size, HPCC-style equal-count bins.
	sd := plot.Chart{Title: "FCT slowdown vs flow size", XLabel: "flow size (bytes, largest in 5% bin)", YLabel: "slowdown", LogX: true, XBytes: true}
	for li, t := range a.ByCC {
		var x, p50, p99 []float64
		for _, b := range t.EqualBins {
			x = append(x, float64(b.High))
			p50 = append(p50, b.Summary.P50.F())
			p99 = append(p99, b.Summary.P99.F())
		}
		sd.Series = append(sd.Series, plot.Series{Name: t.CC + " p99", X: x, Y: p99, Color: li + 1, Marks: true},
			plot.Series{Name: t.CC + " p50", X: x, Y: p50, Dashed: true, Color: li + 1, Marks: true})
	}
	out = append(out, sd)

	tp := plot.Chart{Title: "Throughput per flow", XLabel: "time (ms)", YLabel: "Mbit/s", YFromZero: true}
	for i, s := range a.Throughput {
		if i == maxLines {
			tp.Title += fmt.Sprintf(" (first %d of %d flows)", maxLines, len(a.Throughput))
			break
		}
		ser := plot.Series{Name: s.Flow}
		for _, p := range s.Points {
			ser.X = append(ser.X, ms(p.T))
			ser.Y = append(ser.Y, p.V/1e6)
		}
		tp.Series = append(tp.Series, ser)
	}
	out = append(out, tp)

	jn := plot.Chart{Title: "Jain's fairness index among flows sharing a bottleneck", XLabel: "time (ms)", YLabel: "Jain index", YMin: 0, YMax: 1.05}
	for _, g := range a.Fairness {
		ser := plot.Series{Name: g.Bottleneck}
		for _, p := range g.Jain {
			ser.X = append(ser.X, ms(p.T))
			ser.Y = append(ser.Y, p.Index.F())
		}
		jn.Series = append(jn.Series, ser)
	}
	out = append(out, jn)

	ut := plot.Chart{Title: "Host link utilisation (sent)", XLabel: "time (ms)", YLabel: "fraction of link rate", YFromZero: true}
	for _, l := range a.Links {
		if l.RateBps == 0 || len(ut.Series) == maxLines {
			continue
		}
		ser := plot.Series{Name: l.Sender + " @" + l.Capture}
		for _, p := range l.Points {
			ser.X = append(ser.X, ms(p.T))
			ser.Y = append(ser.Y, p.V/float64(l.RateBps))
		}
		ut.Series = append(ut.Series, ser)
	}
	out = append(out, ut)

	q := plot.Chart{Title: "Queue length", XLabel: "time (ms)", YLabel: "KB", YFromZero: true}
	qc := plot.Chart{Title: "Queue length CDF", XLabel: "KB", YLabel: "fraction of samples", YMin: 0, YMax: 1.02}
	// The busiest ports first: an idle port's flat line says little.
	qs := append(a.Queues[:0:0], a.Queues...)
	sort.SliceStable(qs, func(i, j int) bool { return qs[i].Summary.Mean.F() > qs[j].Summary.Mean.F() })
	for i, qq := range qs {
		if i == maxLines {
			break
		}
		ser := plot.Series{Name: qq.Port.String()}
		vals := make([]float64, 0, len(qq.Samples))
		for _, p := range qq.Samples {
			ser.X = append(ser.X, ms(p.T))
			ser.Y = append(ser.Y, p.V/1e3)
			vals = append(vals, p.V/1e3)
		}
		q.Series = append(q.Series, ser)
		cs := plot.Series{Name: qq.Port.String(), Step: true}
		for _, c := range series.CDF(vals) {
			cs.X = append(cs.X, c[0])
			cs.Y = append(cs.Y, c[1])
		}
		qc.Series = append(qc.Series, cs)
	}
	out = append(out, q, qc)

	cw := plot.Chart{Title: "Congestion window", XLabel: "time (ms)", YLabel: "cwnd (KB)", YFromZero: true}
	sg := plot.Chart{Title: "Control signal", XLabel: "time (ms)", YLabel: "signal (law's fixed point)"}
	for i, tr := range a.Traces {
		if i == maxLines {
			break
		}
		c := plot.Series{Name: tr.CC + " " + tr.Sock}
		s := plot.Series{Name: tr.CC + " " + tr.Sock + " " + tr.SignalName}
		for _, p := range tr.Cwnd {
			c.X = append(c.X, ms(p.T))
			c.Y = append(c.Y, p.V/1e3)
		}
		for _, p := range tr.Signal {
			s.X = append(s.X, ms(p.T))
			s.Y = append(s.Y, p.V)
		}
		cw.Series = append(cw.Series, c)
		sg.Series = append(sg.Series, s)
	}
	out = append(out, cw, sg)

	it := plot.Chart{Title: "Queue length reported by INT (largest per window)", XLabel: "time (ms)", YLabel: "KB", YFromZero: true}
	for _, r := range a.INT {
		for _, q := range r.Queues {
			if len(it.Series) == maxLines {
				break
			}
			dir := "fwd"
			if q.Echo {
				dir = "echo"
			}
			ser := plot.Series{Name: fmt.Sprintf("%s %s hop %d", r.Capture, dir, q.Hop)}
			for _, p := range q.Points {
				ser.X = append(ser.X, ms(p.T))
				ser.Y = append(ser.Y, p.V/1e3)
			}
			it.Series = append(it.Series, ser)
		}
	}
	out = append(out, it)

	sf := plot.Chart{Title: "Start vs finish time per flow", XLabel: "start (ms)", YLabel: "finish (ms)", Points: true, XFromZero: true, YFromZero: true}
	for _, t := range a.ByCC {
		ser := plot.Series{Name: t.CC}
		// Every k-th flow past maxPoints: a scatter of more says no more
		// and makes the page heavy.
		step := max(t.Complete/maxPoints, 1)
		n := 0
		for _, f := range a.Flows {
			cc := f.CC
			if cc == "" {
				cc = "all"
			}
			if cc != t.CC || !f.Complete {
				continue
			}
			if n++; (n-1)%step != 0 {
				continue
			}
			ser.X = append(ser.X, ms(time.Duration(f.Start-a.Origin)))
			ser.Y = append(ser.Y, ms(time.Duration(f.End-a.Origin)))
		}
		if step > 1 {
			ser.Name += fmt.Sprintf(" (every %d. flow)", step)
		}
		sf.Series = append(sf.Series, ser)
	}
	out = append(out, sf)
	return out
}

// figureNames are the file stems of Charts, in order.
var figureNames = []string{"slowdown", "throughput", "jain", "utilisation", "queue", "queue_cdf", "cwnd", "signal", "int_queue", "start_finish"}

// Figures renders every chart that has data, in PNG and SVG.
func (a *Analysis) Figures() ([]Figure, error) {
	names := figureNames
	var out []Figure
	for i, c := range a.Charts() {
		if !hasData(c) {
			continue
		}
		png, err := plot.Render(c, "png", 7, 4.2)
		if err != nil {
			return nil, err
		}
		svg, err := plot.Render(c, "svg", 7, 4.2)
		if err != nil {
			return nil, err
		}
		out = append(out, Figure{Name: names[i], Caption: c.Title, PNG: png, SVG: svg})
	}
	return out, nil
}

func hasData(c plot.Chart) bool {
	for _, s := range c.Series {
		for j := range s.X {
			if s.X[j] == s.X[j] && s.Y[j] == s.Y[j] && (!c.LogX || s.X[j] > 0) {
				return true
			}
		}
	}
	return false
}
