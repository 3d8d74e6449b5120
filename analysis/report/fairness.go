package report

import (
	"math"
	"sort"
	"time"

	"cclab/analysis/metrics"
	"cclab/analysis/series"
)

// fairness groups the flows by bottleneck and computes, per group, Jain's
// index per window and the time to fairness after every change of the
// active flows.
func fairness(a *Analysis, tput *series.Windows[wkey], cfg Config) {
	groups := map[string][]int{}
	var order []string
	for i, f := range a.Flows {
		if !f.hasKey || f.active.End <= f.active.Start {
			continue
		}
		b := f.Bottleneck
		if b == "" {
			b = "all flows"
		}
		if _, ok := groups[b]; !ok {
			order = append(order, b)
		}
		groups[b] = append(groups[b], i)
	}
	sort.Strings(order)
	for _, b := range order {
		idx := groups[b]
		if len(idx) < 2 {
			continue
		}
		members := map[wkey]series.Interval{}
		g := FairGroup{Bottleneck: b, FirstFair: -1}
		type event struct {
			t int64
			d int
		}
		var events []event
		for _, i := range idx {
			f := a.Flows[i]
			members[f.key] = f.active
			g.Flows = append(g.Flows, f.ID)
			events = append(events, event{f.active.Start, +1}, event{f.active.End, -1})
		}
		g.Jain = series.Jain(tput, members)
		pts := make([]metrics.Point, len(g.Jain))
		for i := range g.Jain {
			g.Jain[i].T -= time.Duration(a.Origin)
			pts[i] = metrics.Point{T: g.Jain[i].T, V: g.Jain[i].Index.F()}
		}
		// Sweep the starts (+1) and ends (-1) in time order: after each
		// change of the active set, how long until the index holds.
		sort.Slice(events, func(i, j int) bool { return events[i].t < events[j].t })
		fair := metrics.NewFairness(pts, cfg.FairThreshold, cfg.FairHold)
		if at, ok := fair.From(0); ok {
			g.FirstFair = at
		}
		active := 0
		for k := 0; k < len(events); {
			e := events[k].t
			for ; k < len(events) && events[k].t == e; k++ {
				active += events[k].d
			}
			if active < 2 {
				continue
			}
			c := Convergence{At: time.Duration(e - a.Origin), Flows: active}
			next := time.Duration(math.MaxInt64)
			if k < len(events) {
				next = time.Duration(events[k].t - a.Origin)
			}
			if at, ok := fair.From(c.At); ok && at < next {
				c.Converged, c.After = true, at-c.At
			}
			g.Convergence = append(g.Convergence, c)
		}
		a.Fairness = append(a.Fairness, g)
	}
}
