package report

import (
	"fmt"
	"sort"
	"time"

	"cclab/analysis/metrics"
	"cclab/analysis/series"
)

// fairness groups the flows by bottleneck and, where fairness is defined,
// computes Jain's index per window and the time to fairness. Fairness is
// defined on stable intervals: at least two flows active on the
// bottleneck and the set of active flows unchanged for at least
// Config.FairOverlapRTTs base RTTs (the fast-convergence paper measures
// flows that share a link long enough to converge; under flows that come
// and go every few milliseconds no index means anything). A bottleneck
// without such an interval is counted in FairSkipped and not reported.
// The index is taken per base RTT (the largest of the flows).
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
	var rtt time.Duration
	for _, f := range a.Flows {
		rtt = max(rtt, f.BaseRTT)
	}
	factor, rule := fairWindow(rtt, cfg.CalibratedRTT, tput.Width)
	tput = tput.Coarsen(factor)
	a.Config.FairWindowNs, a.Config.FairWindowRule = int64(tput.Width), rule
	a.Config.CalibratedRTTNs = int64(cfg.CalibratedRTT)
	for _, b := range order {
		if g, ok := fairGroup(a, tput, cfg, b, groups[b]); ok {
			a.Fairness = append(a.Fairness, g)
		} else {
			a.FairSkipped++
		}
	}
}

// stable is an interval in which the same flows (at least two) were
// active on a bottleneck.
type stable struct {
	start, end int64 // capture clock
	flows      []int // indexes into Analysis.Flows
}

// stableIntervals sweeps the starts and ends of the flows idx and returns
// the intervals of at least need ns with an unchanged set of >= 2 flows.
func stableIntervals(fl []Flow, idx []int, need int64) []stable {
	var ts []int64
	for _, i := range idx {
		ts = append(ts, fl[i].active.Start, fl[i].active.End)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	var out []stable
	for k := 0; k+1 < len(ts); k++ {
		lo, hi := ts[k], ts[k+1]
		if hi-lo < need {
			continue
		}
		var in []int
		for _, i := range idx {
			if iv := fl[i].active; iv.Start <= lo && iv.End >= hi {
				in = append(in, i)
			}
		}
		if len(in) >= 2 {
			out = append(out, stable{lo, hi, in})
		}
	}
	return out
}

func fairGroup(a *Analysis, tput *series.Windows[wkey], cfg Config, b string, idx []int) (FairGroup, bool) {
	var rtt time.Duration
	for _, i := range idx {
		rtt = max(rtt, a.Flows[i].BaseRTT)
	}
	need := max(int64(rtt)*int64(cfg.FairOverlapRTTs), 1)
	st := stableIntervals(a.Flows, idx, need)
	if len(st) == 0 {
		return FairGroup{}, false
	}
	g := FairGroup{Bottleneck: b, FirstFair: -1, MinOverlap: time.Duration(need)}
	members := map[wkey]series.Interval{}
	seen := map[int]bool{}
	for _, s := range st {
		g.Shared += time.Duration(s.end - s.start)
		for _, i := range s.flows {
			if !seen[i] {
				seen[i] = true
				f := a.Flows[i]
				members[f.key] = f.active
				g.Flows = append(g.Flows, f.ID)
			}
		}
	}
	// The index only inside the stable intervals.
	inStable := func(t time.Duration) bool {
		abs := int64(t)
		for _, s := range st {
			if abs >= s.start && abs < s.end {
				return true
			}
		}
		return false
	}
	for _, p := range series.Jain(tput, members) {
		if inStable(p.T) {
			p.T -= time.Duration(a.Origin)
			g.Jain = append(g.Jain, p)
		}
	}
	// Time to fairness per stable interval, from that interval's points
	// only: a fair stretch must not run on across another interval, and
	// it must hold for FairHold before the interval ends.
	for _, s := range st {
		c := Convergence{At: time.Duration(s.start - a.Origin), Flows: len(s.flows)}
		end := time.Duration(s.end - a.Origin)
		var pts []metrics.Point
		for _, p := range g.Jain {
			if p.T >= c.At && p.T < end {
				pts = append(pts, metrics.Point{T: p.T, V: p.Index.F()})
			}
		}
		fair := metrics.NewFairness(pts, cfg.FairThreshold, cfg.FairHold)
		if at, ok := fair.From(c.At); ok && at+cfg.FairHold <= end {
			c.Converged, c.After = true, at-c.At
			if g.FirstFair < 0 {
				g.FirstFair = at
			}
		}
		g.Convergence = append(g.Convergence, c)
	}
	return g, true
}

// fairWindow is Jain's window, as a multiple of the throughput window
// width: one RTT of the slowest path, a flow's rate being what it sends
// per round trip. The RTT is the larger of the configured base RTT and
// the calibrated one: on a path whose propagation is small the RTT the
// flows see is CPU time, which the calibration measures (a 1 ms window on
// such a path holds a few packets, or one 64 KB GSO burst, and calls
// equal flows unfair). Never below the throughput window. rule says which
// RTT set it, for the analysis output.
func fairWindow(configured, calibrated, width time.Duration) (factor int, rule string) {
	rtt, from := configured, "the configured base RTT"
	if calibrated > configured {
		rtt, from = calibrated, "the calibrated RTT (loaded floor)"
	}
	factor = int(rtt / width)
	if factor <= 1 {
		return 1, fmt.Sprintf("the throughput window %v: %s is %v, less than it", width, from, rtt)
	}
	return factor, fmt.Sprintf("one RTT: %s, %v (configured %v, calibrated %v), in whole %v windows", from, rtt, configured, calibrated, width)
}
