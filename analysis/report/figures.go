package report

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"cclab/analysis/metrics"
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

// comparisonNames are the file stems of comparisonCharts, in order.
var comparisonNames = []string{"slowdown_p50_bins", "slowdown_p95_bins", "slowdown_p99_bins", "slowdown_p999_bins",
	"fct_cdf", "long_throughput", "queue_busiest", "queue_busiest_cdf", "int_queue_busiest"}

// lawColor gives every law one colour in every comparison figure: its
// place in the analysis's table.
func (a *Analysis) lawColor() map[string]int {
	c := map[string]int{}
	for i, t := range a.ByCC {
		c[t.CC] = i + 1
	}
	return c
}

// lawOf is the law a merged series name starts with ("cubic/h0" -> cubic).
func lawOf(name string) string {
	law, _, ok := strings.Cut(name, "/")
	if !ok {
		return "all"
	}
	return law
}

// comparisonCharts are the figures that compare the laws as the papers
// draw them, one line per law in the law's colour: FCT slowdown per flow
// size bin (PowerTCP's bins, log-log, as HPCC Fig. 11 and PowerTCP Fig.
// 6) at p50, p95, p99 and p99.9; the FCT CDF; the long flows' throughput
// over time; the queue of each law's busiest port over time and its CDF
// (the qdisc sampler), and the queue INT reported at its busiest hop.
func (a *Analysis) comparisonCharts() []plot.Chart {
	col := a.lawColor()
	var out []plot.Chart
	pct := []struct {
		name string
		get  func(metrics.Summary) float64
	}{
		{"p50", func(s metrics.Summary) float64 { return s.P50.F() }},
		{"p95", func(s metrics.Summary) float64 { return s.P95.F() }},
		{"p99", func(s metrics.Summary) float64 { return s.P99.F() }},
		{"p99.9", func(s metrics.Summary) float64 { return s.P999.F() }},
	}
	for _, p := range pct {
		c := plot.Chart{Title: p.name + " FCT slowdown per flow size", XLabel: "flow size (bytes, bin's upper edge)",
			YLabel: p.name + " slowdown", LogX: true, LogY: true, XBytes: true}
		for _, t := range a.ByCC {
			ser := plot.Series{Name: t.CC, Color: col[t.CC], Marks: true}
			for _, b := range t.FixedBins {
				if b.Summary.N == 0 || b.High == 0 {
					continue
				}
				ser.X = append(ser.X, float64(b.High))
				ser.Y = append(ser.Y, p.get(b.Summary))
			}
			c.Series = append(c.Series, ser)
		}
		out = append(out, c)
	}

	cdf := plot.Chart{Title: "FCT CDF", XLabel: "FCT (ms)", YLabel: "fraction of flows", LogX: true, YMin: 0, YMax: 1.02}
	for _, t := range a.ByCC {
		var v []float64
		for _, f := range a.Flows {
			if f.Complete && (f.CC == t.CC || (f.CC == "" && t.CC == "all")) {
				v = append(v, ms(f.FCT))
			}
		}
		ser := plot.Series{Name: t.CC, Color: col[t.CC], Step: true}
		for _, c := range series.CDF(v) {
			ser.X = append(ser.X, c[0])
			ser.Y = append(ser.Y, c[1])
		}
		cdf.Series = append(cdf.Series, ser)
	}
	out = append(out, cdf)

	// Long flows (group "long" in flows.csv): each law's summed throughput.
	long := map[string]bool{}
	for _, f := range a.Flows {
		if f.Group == "long" {
			long[f.ID] = true
		}
	}
	bucket := max(time.Duration(a.Config.FairWindowNs), 10*time.Millisecond, a.Window)
	lt := plot.Chart{Title: fmt.Sprintf("Long flows' throughput (mean per %v)", bucket), XLabel: "time (ms)", YLabel: "Mbit/s", YFromZero: true}
	byLaw := map[string]map[time.Duration]float64{}
	for _, s := range a.Throughput {
		if !long[s.Flow] {
			continue
		}
		law := s.CC
		if law == "" {
			law = lawOf(s.Flow)
		}
		if byLaw[law] == nil {
			byLaw[law] = map[time.Duration]float64{}
		}
		// Averaged over buckets of a base RTT (at least 10 ms): per-window
		// rates of GSO bursts say nothing at this scale.
		for _, p := range s.Points {
			byLaw[law][p.T/bucket*bucket] += p.V * float64(a.Window) / float64(bucket)
		}
	}
	for _, t := range a.ByCC {
		pts := byLaw[t.CC]
		ts := make([]time.Duration, 0, len(pts))
		for k := range pts {
			ts = append(ts, k)
		}
		sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
		ser := plot.Series{Name: t.CC, Color: col[t.CC]}
		for _, k := range ts {
			ser.X = append(ser.X, ms(k))
			ser.Y = append(ser.Y, pts[k]/1e6)
		}
		lt.Series = append(lt.Series, ser)
	}
	out = append(out, lt)

	// Each law's busiest port (largest mean queue).
	busiest := map[string]series.Queue{}
	for _, q := range a.Queues {
		law := lawOf(q.Port.Node)
		if b, ok := busiest[law]; !ok || q.Summary.Mean.F() > b.Summary.Mean.F() {
			busiest[law] = q
		}
	}
	qt := plot.Chart{Title: "Queue at each law's busiest port", XLabel: "time (ms)", YLabel: "KB", YFromZero: true}
	qc := plot.Chart{Title: "Queue CDF at each law's busiest port", XLabel: "KB", YLabel: "fraction of samples", YMin: 0, YMax: 1.02}
	for _, t := range a.ByCC {
		q, ok := busiest[t.CC]
		if !ok && len(a.ByCC) == 1 {
			q, ok = busiest["all"]
		}
		if !ok {
			continue
		}
		name := q.Port.String()
		ts := plot.Series{Name: name, Color: col[t.CC]}
		vals := make([]float64, 0, len(q.Samples))
		for _, p := range q.Samples {
			ts.X = append(ts.X, ms(p.T))
			ts.Y = append(ts.Y, p.V/1e3)
			vals = append(vals, p.V/1e3)
		}
		cs := plot.Series{Name: name, Color: col[t.CC], Step: true}
		for _, c := range series.CDF(vals) {
			cs.X = append(cs.X, c[0])
			cs.Y = append(cs.Y, c[1])
		}
		qt.Series = append(qt.Series, ts)
		qc.Series = append(qc.Series, cs)
	}
	out = append(out, qt, qc)

	// The same from the telemetry: the INT-reported queue (largest per
	// window) of each law's busiest hop, as a law's sender saw it.
	it := plot.Chart{Title: "Queue reported by INT at each law's busiest hop", XLabel: "time (ms)", YLabel: "KB", YFromZero: true}
	type hop struct {
		name string
		q    series.INTQueue
	}
	busiestINT := map[string]hop{}
	for _, r := range a.INT {
		law := lawOf(r.Capture)
		for _, q := range r.Queues {
			if b, ok := busiestINT[law]; !ok || q.Summary.Mean.F() > b.q.Summary.Mean.F() {
				busiestINT[law] = hop{fmt.Sprintf("%s hop %d", r.Capture, q.Hop), q}
			}
		}
	}
	for _, t := range a.ByCC {
		h, ok := busiestINT[t.CC]
		if !ok && len(a.ByCC) == 1 {
			h, ok = busiestINT["all"]
		}
		if !ok {
			continue
		}
		ser := plot.Series{Name: h.name, Color: col[t.CC]}
		for _, p := range h.q.Points {
			ser.X = append(ser.X, ms(p.T))
			ser.Y = append(ser.Y, p.V/1e3)
		}
		it.Series = append(it.Series, ser)
	}
	return append(out, it)
}

// Charts lists the figures of an analysis: the comparisons first, then
// the per-flow and per-port diagnostics.
func (a *Analysis) Charts() []plot.Chart {
	out := a.comparisonCharts()
	col := a.lawColor() // a law's colour in every figure
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
		ser := plot.Series{Name: s.Flow, Color: col[lawOf(s.Flow)]}
		for _, p := range s.Points {
			ser.X = append(ser.X, ms(p.T))
			ser.Y = append(ser.Y, p.V/1e6)
		}
		tp.Series = append(tp.Series, ser)
	}
	out = append(out, tp)

	jn := plot.Chart{Title: "Jain's fairness index among flows sharing a bottleneck", XLabel: "time (ms)", YLabel: "Jain index", YMin: 0, YMax: 1.05}
	for _, g := range a.Fairness {
		ser := plot.Series{Name: g.Bottleneck, Color: col[lawOf(g.Bottleneck)]}
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
		ser := plot.Series{Name: l.Sender + " @" + l.Capture, Color: col[lawOf(l.Capture)]}
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
		ser := plot.Series{Name: qq.Port.String(), Color: col[lawOf(qq.Port.Node)]}
		vals := make([]float64, 0, len(qq.Samples))
		for _, p := range qq.Samples {
			ser.X = append(ser.X, ms(p.T))
			ser.Y = append(ser.Y, p.V/1e3)
			vals = append(vals, p.V/1e3)
		}
		q.Series = append(q.Series, ser)
		cs := plot.Series{Name: qq.Port.String(), Step: true, Color: col[lawOf(qq.Port.Node)]}
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
		c := plot.Series{Name: tr.CC + " " + tr.Sock, Color: col[tr.CC]}
		s := plot.Series{Name: tr.CC + " " + tr.Sock + " " + tr.SignalName, Color: col[tr.CC]}
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
			ser := plot.Series{Name: fmt.Sprintf("%s %s hop %d", r.Capture, dir, q.Hop), Color: col[lawOf(r.Capture)]}
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
		ser := plot.Series{Name: t.CC, Color: col[t.CC]}
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
	out = append(out, sf, a.pauseChart())

	return append(out, a.raisedCharts(out)...)
}

// figureNames are the file stems of Charts, in order.
var figureNames = append(comparisonNames[:len(comparisonNames):len(comparisonNames)],
	"slowdown", "throughput", "jain", "utilisation", "queue", "queue_cdf", "cwnd", "signal", "int_queue", "start_finish", "pfc_pauses", "port_rate", "port_rate_day")

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
