package reproduce

import (
	"fmt"
	"math"
	"path/filepath"
	"time"

	"cclab/analysis/metrics"
	"cclab/analysis/plot"
	"cclab/analysis/report"
)

// The side-by-side figures: a claim's own series from one variant's run,
// with the paper's number marked on it where the paper's number is a level
// of that series (a queue) or a time after an event (a drain, a recovery).
// One per claim that carries the paper's number and checks one variant's
// value; ratio claims are drawn by paperFigure only.

// sideBySidePrefix starts the file stem of a side-by-side figure in the
// variant's analysis/figures: paper-<claim id>.png.
const sideBySidePrefix = "paper-"

// sideBySide is what a claim's figure draws.
type sideBySide struct {
	yLabel string
	series []metrics.Point // the run's series, V in the y unit
	level  float64         // the paper's level in the y unit (NaN: none)
	at     time.Duration   // the paper's time, from the run's event (-1: none)
	event  time.Duration   // the event the paper's time counts from
	metric Metric          // the claim's metric, for the paper's number
}

// claimSeries picks the series a value claim reads and puts the paper's
// number on it; ok is false for a metric without a series to show.
func claimSeries(v report.MeasureView, group string, metric string, paper float64) (sideBySide, bool) {
	s := sideBySide{level: math.NaN(), at: -1}
	rtt := v.BaseRTT()
	kb := func(q []metrics.Point) []metrics.Point {
		out := make([]metrics.Point, len(q))
		for i, p := range q {
			out[i] = metrics.Point{T: p.T, V: p.V / 1e3}
		}
		return out
	}
	switch metric {
	case "queue_peak", "queue_p50", "mice_queue":
		q := v.BottleneckQueue()
		if q == nil {
			return s, false
		}
		s.yLabel, s.series, s.level = "bottleneck queue (KB)", kb(q.Samples), paper/1e3
	case "queue_peak_bdps":
		q := v.BottleneckQueue()
		bdp := v.RateBps() * float64(rtt) / 8e9
		if q == nil || bdp <= 0 {
			return s, false
		}
		s.yLabel, s.series, s.level = "bottleneck queue (KB)", kb(q.Samples), paper*bdp/1e3
	case "drain_rtts":
		q := v.BottleneckQueue()
		start, ok := v.GroupStart(group)
		if q == nil || !ok || rtt <= 0 {
			return s, false
		}
		s.yLabel, s.series = "bottleneck queue (KB)", kb(q.Samples)
		s.event, s.at = start, start+time.Duration(paper*float64(rtt))
	case "recovery_rtts":
		longs := v.GroupFlows("long")
		end, ok := v.GroupEnd("short")
		if len(longs) == 0 || !ok || rtt <= 0 {
			return s, false
		}
		for _, th := range v.Analysis().Throughput {
			if th.Flow == longs[0].ID {
				for _, p := range th.Points {
					s.series = append(s.series, metrics.Point{T: p.T, V: p.V / 1e6})
				}
			}
		}
		if len(s.series) == 0 {
			return s, false
		}
		s.yLabel = "long flow (Mbit/s)"
		s.event, s.at = end, end+time.Duration(paper*float64(rtt))
	default:
		return s, false
	}
	return s, len(s.series) > 0
}

// writeSideBySide draws the side-by-side figure of every claim of e that
// reads cc's value and carries the paper's number, from view v of the
// variant's run, into dir/analysis/figures (copyFigures finds them there).
func writeSideBySide(e *Experiment, v report.MeasureView, cc, dir string) error {
	for _, c := range e.Claims {
		if c.Value == nil || c.Value.CC != cc || c.Paper.Value == nil {
			continue
		}
		s, ok := claimSeries(v, e.Group, c.Value.Metric, *c.Paper.Value)
		if !ok {
			continue
		}
		s.metric = Metric{Key: c.Value.Metric}
		for _, m := range e.Metrics {
			if m.Key == c.Value.Metric {
				s.metric = m
			}
		}
		png, err := plot.Render(s.chart(e.Name, cc, c), "png", 6, 3.5)
		if err != nil {
			return fmt.Errorf("side-by-side figure of %s: %w", c.ID, err)
		}
		path := filepath.Join(dir, "analysis", "figures", sideBySidePrefix+c.ID+".png")
		if err := atomicWrite(path, png); err != nil {
			return err
		}
	}
	return nil
}

// chart is the figure: the run's series over time (ms), the paper's level
// as a dashed line across it, or the paper's time as a dashed vertical
// line with the event it counts from.
func (s sideBySide) chart(exp, cc string, c ClaimSpec) plot.Chart {
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	run := plot.Series{Name: cc + " (this run)", Color: 1}
	lo, hi := math.Inf(1), math.Inf(-1)
	top := 0.0
	for _, p := range s.series {
		run.X, run.Y = append(run.X, ms(p.T)), append(run.Y, p.V)
		lo, hi, top = math.Min(lo, ms(p.T)), math.Max(hi, ms(p.T)), math.Max(top, p.V)
	}
	paper := fmt.Sprintf("paper: %s %s (%s)", s.metric.Format(*c.Paper.Value), s.metric.Unit, c.Paper.Where)
	series := []plot.Series{run}
	if !math.IsNaN(s.level) {
		series = append(series, plot.Series{Name: paper, X: []float64{lo, hi}, Y: []float64{s.level, s.level}, Dashed: true, Color: 7})
		top = math.Max(top, s.level)
	}
	if s.at >= 0 {
		series = append(series,
			plot.Series{Name: "the event the paper's time counts from", X: []float64{ms(s.event), ms(s.event)}, Y: []float64{0, top}, Color: 3},
			plot.Series{Name: paper, X: []float64{ms(s.at), ms(s.at)}, Y: []float64{0, top}, Dashed: true, Color: 7})
	}
	return plot.Chart{
		Title:  fmt.Sprintf("%s, %s: %s", exp, cc, c.ID),
		XLabel: "time (ms)", YLabel: s.yLabel, YFromZero: true,
		Series: series,
	}
}
