package report

import (
	"math"
	"sort"
	"time"

	"cclab/analysis/metrics"
	"cclab/analysis/series"
)

// MeasureView is one variant's analysis with the helpers the metrics use.
type MeasureView struct {
	a       *Analysis
	rateBps float64 // the bottleneck link's rate
}

// GroupFlows returns the flows of a workload entry (all when group is "").
func (v MeasureView) GroupFlows(group string) []Flow {
	var out []Flow
	for _, f := range v.a.Flows {
		if group == "" || f.Group == group {
			out = append(out, f)
		}
	}
	return out
}

// rel is a capture-clock time relative to the analysis origin.
func (v MeasureView) rel(t int64) time.Duration { return time.Duration(t - v.a.Origin) }

// GroupStart is the earliest start of a group, relative to the origin.
func (v MeasureView) GroupStart(group string) (time.Duration, bool) {
	fs := v.GroupFlows(group)
	if len(fs) == 0 {
		return 0, false
	}
	t := int64(math.MaxInt64)
	for _, f := range fs {
		t = min(t, f.Start)
	}
	return v.rel(t), true
}

// GroupEnd is the latest end of a group's complete flows.
func (v MeasureView) GroupEnd(group string) (time.Duration, bool) {
	var t int64
	ok := false
	for _, f := range v.GroupFlows(group) {
		if f.Complete {
			t, ok = max(t, f.End), true
		}
	}
	return v.rel(t), ok
}

// BaseRTT is the largest base RTT of the run's flows (the ideal FCT's).
func (v MeasureView) BaseRTT() time.Duration {
	var b time.Duration
	for _, f := range v.a.Flows {
		b = max(b, f.BaseRTT)
	}
	return b
}

// BottleneckQueue is the switch port whose queue reached the highest
// peak: in the suite's stars the port towards the receiver.
func (v MeasureView) BottleneckQueue() *series.Queue {
	var best *series.Queue
	for i := range v.a.Queues {
		q := &v.a.Queues[i]
		if best == nil || q.Summary.Max.F() > best.Summary.Max.F() {
			best = q
		}
	}
	return best
}

// queuePeak is the largest queue sample in [from, to).
func queuePeak(q *series.Queue, from, to time.Duration) float64 {
	p := nan
	for _, s := range q.Samples {
		if s.T >= from && s.T < to && (math.IsNaN(p) || s.V > p) {
			p = s.V
		}
	}
	return p
}

// drainTime is the time from `from` until the queue, after its peak in
// [from, to), first falls to at most thresh bytes; +Inf when it never
// does while sampled (it did not drain).
func drainTime(q *series.Queue, from, to time.Duration, thresh float64) float64 {
	peakAt, peak := time.Duration(-1), -1.0
	for _, s := range q.Samples {
		if s.T >= from && s.T < to && s.V > peak {
			peak, peakAt = s.V, s.T
		}
	}
	if peakAt < 0 {
		return nan
	}
	for _, s := range q.Samples {
		if s.T > peakAt && s.V <= thresh {
			return float64(s.T - from)
		}
	}
	return math.Inf(1)
}

// queueQuantile is the p-th percentile of the queue samples in [from, to).
func queueQuantile(q *series.Queue, from, to time.Duration, p float64) float64 {
	var vs []float64
	for _, s := range q.Samples {
		if s.T >= from && s.T < to {
			vs = append(vs, s.V)
		}
	}
	sort.Float64s(vs)
	if len(vs) == 0 {
		return nan
	}
	return metrics.Percentile(vs, p)
}

// txUtilisation is the port's transmitted bits in [from, to) over the
// link rate times the time covered: each TxRate point is the rate since
// the previous sample, so it is weighted by that interval (samples are
// not evenly spaced on a loaded machine).
func txUtilisation(q *series.Queue, from, to time.Duration, rate float64) float64 {
	var bits, span float64
	for i := 1; i < len(q.TxRate); i++ {
		s := q.TxRate[i]
		if s.T <= from || s.T > to {
			continue
		}
		dt := float64(s.T-q.TxRate[i-1].T) / 1e9
		bits += s.V * dt
		span += dt
	}
	if span == 0 || rate <= 0 {
		return nan
	}
	return bits / span / rate
}

// recovery is the time from `after` until the flow's delivered rate first
// reaches frac of the link rate in a window; +Inf if it never does while
// the flow is measured after `after`, NaN without a series.
func (v MeasureView) recovery(flowID string, after time.Duration, frac float64) float64 {
	for _, s := range v.a.Throughput {
		if s.Flow != flowID {
			continue
		}
		seen := false
		for _, p := range s.Points {
			if p.T >= after {
				seen = true
				if p.V >= frac*v.rateBps {
					return float64(p.T - after)
				}
			}
		}
		if seen {
			return math.Inf(1)
		}
	}
	return nan
}

// fctPercentile is the p-th percentile FCT (ns) of a group's complete flows.
func (v MeasureView) fctPercentile(group string, p float64) float64 {
	var vs []float64
	for _, f := range v.GroupFlows(group) {
		if f.Complete {
			vs = append(vs, float64(f.FCT))
		}
	}
	sort.Float64s(vs)
	if len(vs) == 0 {
		return nan
	}
	return metrics.Percentile(vs, p)
}

// pcapFCTPercentile is the p-th percentile packet FCT (ns: the capture's
// SYN to the ACK of the last byte) of a group's flows with a complete
// packet MeasureView.
func (v MeasureView) pcapFCTPercentile(group string, p float64) float64 {
	var vs []float64
	for _, f := range v.GroupFlows(group) {
		if f.Complete && f.PcapStatus == "complete" && f.PcapFCT > 0 {
			vs = append(vs, float64(f.PcapFCT))
		}
	}
	sort.Float64s(vs)
	if len(vs) == 0 {
		return nan
	}
	return metrics.Percentile(vs, p)
}

// netSlowdown is a flow's slowdown from its packet FCT (the captures:
// first SYN to the ACK covering the last byte), as the papers' simulators
// measure it; the application's FCT on this machine also holds the
// in-process runner's scheduling delays (see appLate). Flows without a
// complete packet MeasureView keep the application's slowdown.
func netSlowdown(f Flow) float64 {
	if f.PcapStatus == "complete" && f.PcapFCT > 0 && f.Ideal > 0 {
		return max(1, float64(f.PcapFCT)/float64(f.Ideal))
	}
	return f.Slowdown.F()
}

// slowdownPercentile is the p-th percentile network slowdown of the
// complete flows with size in [lo, hi) (hi 0: no upper bound), and how
// many there were.
func (v MeasureView) slowdownPercentile(lo, hi uint64, p float64) (float64, int) {
	var vs []float64
	for _, f := range v.a.Flows {
		s := netSlowdown(f)
		if !f.Complete || math.IsNaN(s) || f.Size < lo || (hi > 0 && f.Size >= hi) {
			continue
		}
		vs = append(vs, s)
	}
	sort.Float64s(vs)
	if len(vs) == 0 {
		return nan, 0
	}
	return metrics.Percentile(vs, p), len(vs)
}

// appLate counts the flows whose application FCT exceeds the packet FCT
// by more than d: time spent outside the network (connect and read in a
// loaded process).
func (v MeasureView) appLate(d time.Duration) float64 {
	n := 0
	for _, f := range v.a.Flows {
		if f.Complete && f.PcapStatus == "complete" && f.FCT-f.PcapFCT > d {
			n++
		}
	}
	return float64(n)
}

// failed counts the flows that did not complete.
func (v MeasureView) failed() int {
	n := 0
	for _, f := range v.a.Flows {
		if !f.Complete {
			n++
		}
	}
	return n
}

// fairGroup is the bottleneck group with the most flows.
func (v MeasureView) fairGroup() *FairGroup {
	var best *FairGroup
	for i := range v.a.Fairness {
		g := &v.a.Fairness[i]
		if best == nil || len(g.Flows) > len(best.Flows) {
			best = g
		}
	}
	return best
}

// meanJain is the mean Jain index over the windows with at least two
// flows active.
func meanJain(g *FairGroup) float64 {
	var sum float64
	n := 0
	for _, p := range g.Jain {
		if x := p.Index.F(); !math.IsNaN(x) {
			sum += x
			n++
		}
	}
	if n == 0 {
		return nan
	}
	return sum / float64(n)
}

// worstConvergence is the longest time to fairness after a change of the
// active flows, and the share of changes after which fairness was reached
// before the next change.
func worstConvergence(g *FairGroup) (worst float64, converged float64) {
	if len(g.Convergence) == 0 {
		return nan, nan
	}
	ok := 0
	for _, c := range g.Convergence {
		if c.Converged {
			ok++
			worst = max(worst, float64(c.After))
		}
	}
	if ok == 0 {
		worst = nan
	}
	return worst, float64(ok) / float64(len(g.Convergence))
}

// finishSpread describes start vs finish of a group's flows: the spread
// of finish times (ns) and the share of flow pairs where the flow that
// started later finished first (the paper's "last started finish first").
func (v MeasureView) finishSpread(group string) (spread, inverted float64) {
	var fs []Flow
	for _, f := range v.GroupFlows(group) {
		if f.Complete {
			fs = append(fs, f)
		}
	}
	if len(fs) < 2 {
		return nan, nan
	}
	lo, hi := fs[0].End, fs[0].End
	pairs, inv := 0, 0
	for i := range fs {
		lo, hi = min(lo, fs[i].End), max(hi, fs[i].End)
		for j := range fs {
			if fs[j].Start > fs[i].Start {
				pairs++
				if fs[j].End < fs[i].End {
					inv++
				}
			}
		}
	}
	if pairs == 0 {
		return float64(hi - lo), nan
	}
	return float64(hi - lo), float64(inv) / float64(pairs)
}

// retransmitting counts the complete and incomplete flows with size in
// [lo, hi) that retransmitted (from the captures): a short flow that loses
// a packet waits for a retransmission timeout (>= 200 ms in Linux).
func (v MeasureView) retransmitting(lo, hi uint64) float64 {
	n := 0
	for _, f := range v.a.Flows {
		if f.Size >= lo && (hi == 0 || f.Size < hi) && f.Retransmits > 0 {
			n++
		}
	}
	return float64(n)
}
