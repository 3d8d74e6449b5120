package report

import "math"

// The per-flow metrics: a claim takes a percentile of their pool over
// every faithful run (statistic.go), pairing the flows of two laws by
// their id in a ratio.

// sizeBins are the papers' flow-size classes for FCT slowdowns, [lo, hi)
// bytes (hi 0: no upper bound).
var sizeBins = []struct {
	key    string
	lo, hi uint64
}{
	{"short_slowdown", 0, 10_000},
	{"medium_slowdown", 100_000, 1_000_000},
	{"long_slowdown", 1_000_000, 0},
	{"all_slowdown", 0, 0},
}

// SlowdownClasses are the per-flow slowdown metrics a flow of that size
// counts in.
func SlowdownClasses(size uint64) []string {
	var out []string
	for _, b := range sizeBins {
		if size >= b.lo && (b.hi == 0 || size < b.hi) {
			out = append(out, b.key)
		}
	}
	return out
}

var fctFlowMetrics = []Metric{
	{"short_slowdown", "slowdown (packet FCT), flows < 10 KB", "x"},
	{"medium_slowdown", "slowdown (packet FCT), flows 100 KB-1 MB", "x"},
	{"long_slowdown", "slowdown (packet FCT), flows >= 1 MB", "x"},
	{"all_slowdown", "slowdown (packet FCT), all flows", "x"},
}

// fctFlows is every flow's network slowdown by size class; a flow that
// did not complete is +Inf (it took longer than the run).
func fctFlows(v MeasureView) Samples {
	out := Samples{}
	for _, f := range v.a.Flows {
		s := censoredSlowdown(f)
		if math.IsNaN(s) {
			continue
		}
		for _, key := range SlowdownClasses(f.Size) {
			out[key] = append(out[key], Sample{Flow: f.ID, V: s})
		}
	}
	return out
}

// censoredSlowdown is a flow's network slowdown, +Inf when it did not
// complete (it took longer than the run), NaN when it cannot be known.
func censoredSlowdown(f Flow) float64 {
	if !f.Complete {
		return math.Inf(1)
	}
	return netSlowdown(f)
}

var miceFlowMetrics = []Metric{
	{"mice_latency", "a mouse's latency (half its packet FCT: one RTT, one wait)", "base RTTs"},
	{"mice_wait", "queue a mouse waited behind, per crossing", "KB"},
}

// miceFlows is each mouse's latency and the queue it met: a TCP mouse's
// packet FCT is two base RTTs and two waits (its SYN and its data cross
// the bottleneck), so half of it is the papers' one-packet mouse's
// latency, and the wait beyond the base RTTs, halved, in the
// bottleneck's bytes, the queue it met per crossing.
func miceFlows(v MeasureView, group string) Samples {
	if group == "" {
		group = "mice"
	}
	out := Samples{}
	rtt := float64(v.BaseRTT())
	if rtt <= 0 {
		return out
	}
	for _, f := range v.GroupFlows(group) {
		lat, wait := math.Inf(1), math.Inf(1)
		if f.Complete && f.PcapStatus == "complete" && f.PcapFCT > 0 {
			fct := float64(f.PcapFCT)
			lat = fct / 2 / rtt
			wait = max(0, fct-2*rtt) / 2 * v.rateBps / 8e9
		} else if f.Complete {
			continue // no packet MeasureView: not measured, not censored
		}
		out["mice_latency"] = append(out["mice_latency"], Sample{Flow: f.ID, V: lat})
		out["mice_wait"] = append(out["mice_wait"], Sample{Flow: f.ID, V: wait})
	}
	return out
}
