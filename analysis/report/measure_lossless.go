package report

import (
	"math"
	"strings"
	"time"

	"cclab/analysis/metrics"
)

// The lossless measure: what the lossless experiments' claims read
// (docs/lossless.md, "Experiments"). The pause record comes from run.json's
// extensions.pfc (the controller's counts); the victim flows are the
// measure's group (default "victims") and every workload entry named
// after it with a suffix ("victims_short", "victims_b0": one entry per
// sender or size), the congestion that makes them victims the workload
// entry "bursts".

// burstGroup is the workload entry whose flows make the congestion the
// victims suffer from (the TCD fragment's A0..A14 bursts).
const burstGroup = "bursts"

// afterSettle is how long after the bursts end the fairness window
// starts, and afterSpan how long it lasts, in base RTTs: the suite's
// reading of "converge" elsewhere (fairness-join-leave: within 25 base
// RTTs), then 100 base RTTs of steady sharing to judge.
const afterSettle, afterSpan = 25, 100

var losslessMetrics = []Metric{
	{"pfc_pauses", "PFC pause events (every port)", ""},
	{"pfc_paused", "time ports spent paused, summed over ports", "ms"},
	{"pfc_spread_hops", "farthest a pause spread from the congested port", "hops"},
	{"pfc_hosts_paused", "host NICs paused at least once", ""},
	{"pfc_switch_ports_paused", "switch ports paused at least once", ""},
	{"pfc_lost_events", "pause crossings the controller missed (its counts are short by them)", ""},
	{"victim_short_fct", "victim flows < 10 KB: mean FCT (packet FCT)", "ms"},
	{"victim_short_n", "victim flows < 10 KB", ""},
	{"victim_long_fct", "victim flows >= 1 MB: mean FCT (packet FCT)", "ms"},
	{"victim_long_n", "victim flows >= 1 MB", ""},
	{"victim_rate_during", "victim flows' summed throughput while the bursts last, over the link rate", "%"},
	{"after_jain", "Jain index of the flows sending 25-125 base RTTs after the bursts end", ""},
	{"all_p99", "p99 slowdown (packet FCT), all flows", "x"},
	{"failed", "flows not completed", ""},
	{"base_rtt", "base RTT", "ms"},
}

var losslessFlowMetrics = append([]Metric{
	{"under50k_slowdown", "slowdown (packet FCT), flows < 50 KB", "x"},
}, fctFlowMetrics...)

func measureLossless(v MeasureView, group string) Metrics {
	if group == "" {
		group = "victims"
	}
	m := Metrics{"base_rtt": float64(v.BaseRTT())}
	pfcMetrics(v, m)
	victims := v.familyFlows(group)
	m["victim_short_fct"], m["victim_short_n"] = meanFCT(victims, 0, 10_000)
	m["victim_long_fct"], m["victim_long_n"] = meanFCT(victims, 1_000_000, 0)
	m["victim_rate_during"], m["after_jain"] = nan, nan
	start, ok1 := v.GroupStart(burstGroup)
	end, ok2 := v.GroupEnd(burstGroup)
	if ok1 && ok2 && v.rateBps > 0 {
		m["victim_rate_during"] = v.flowsRate(victims, start, end) / v.rateBps
		rtt := v.BaseRTT()
		from := end + afterSettle*rtt
		m["after_jain"] = v.jainOfSenders(from, from+afterSpan*rtt)
	}
	m["all_p99"], _ = v.slowdownPercentile(0, 0, 99)
	m["failed"] = float64(v.failed())
	return m
}

// pfcMetrics are the controller's counts; NaN in a lossy run (no
// extensions.pfc), where "no pause" would be a false zero.
func pfcMetrics(v MeasureView, m Metrics) {
	p := v.a.PFC
	if p == nil {
		for _, k := range []string{"pfc_pauses", "pfc_paused", "pfc_spread_hops", "pfc_hosts_paused", "pfc_switch_ports_paused", "pfc_lost_events"} {
			m[k] = nan
		}
		return
	}
	m["pfc_pauses"] = float64(p.Pauses)
	m["pfc_paused"] = float64(p.PausedNs) // ns, as every "ms" metric
	m["pfc_spread_hops"] = float64(p.MaxSpreadHops)
	hosts, switches := 0, 0
	for _, port := range p.Ports {
		switch {
		case port.Pauses == 0:
		case port.Host:
			hosts++
		default:
			switches++
		}
	}
	m["pfc_hosts_paused"], m["pfc_switch_ports_paused"] = float64(hosts), float64(switches)
	m["pfc_lost_events"] = float64(p.LostEvents)
}

// familyFlows are the flows of the workload entry named group and of
// every entry named group_<suffix>.
func (v MeasureView) familyFlows(group string) []Flow {
	var out []Flow
	for _, f := range v.a.Flows {
		if f.Group == group || strings.HasPrefix(f.Group, group+"_") {
			out = append(out, f)
		}
	}
	return out
}

// meanFCT is the mean FCT (ns; the packet FCT where the capture has it)
// of the flows of size in [lo, hi) (hi 0: no bound), and how many there
// are. A flow that did not complete makes it +Inf: its time is censored,
// and a mean is not taken over a censored time.
func meanFCT(flows []Flow, lo, hi uint64) (float64, float64) {
	var sum float64
	n := 0
	for _, f := range flows {
		if f.Size < lo || (hi != 0 && f.Size >= hi) {
			continue
		}
		n++
		switch {
		case !f.Complete:
			sum = math.Inf(1)
		case f.PcapStatus == "complete" && f.PcapFCT > 0:
			sum += float64(f.PcapFCT)
		default:
			sum += float64(f.FCT)
		}
	}
	if n == 0 {
		return nan, 0
	}
	return sum / float64(n), float64(n)
}

// flowsRate is the flows' summed throughput (bit/s) in [from, to): each
// flow's mean over the windows in it, added.
func (v MeasureView) flowsRate(flows []Flow, from, to time.Duration) float64 {
	ids := map[string]bool{}
	for _, f := range flows {
		ids[f.ID] = true
	}
	if len(ids) == 0 || to <= from {
		return nan
	}
	var sum float64
	for _, s := range v.a.Throughput {
		if ids[s.Flow] {
			sum += windowMean(s.Points, v.a.Window, from, to)
		}
	}
	return sum
}

// jainOfSenders is Jain's index over the mean throughputs in [from, to)
// of the flows that were sending through all of it (started before it,
// not finished before its end); NaN with fewer than two.
func (v MeasureView) jainOfSenders(from, to time.Duration) float64 {
	alive := map[string]bool{}
	for _, f := range v.a.Flows {
		if v.rel(f.Start) <= from && (!f.Complete || v.rel(f.End) >= to) {
			alive[f.ID] = true
		}
	}
	var shares []float64
	for _, s := range v.a.Throughput {
		if alive[s.Flow] {
			shares = append(shares, windowMean(s.Points, v.a.Window, from, to))
		}
	}
	if len(shares) < 2 {
		return nan
	}
	return metrics.Jain(shares)
}

// windowMean is a flow's mean rate over [from, to): each point is its
// rate in one analysis window (a window without a point sent nothing),
// so the bits are the points' sum times the window.
func windowMean(ps []metrics.Point, window, from, to time.Duration) float64 {
	var sum float64
	for _, p := range ps {
		if p.T >= from && p.T < to {
			sum += p.V
		}
	}
	return sum * window.Seconds() / (to - from).Seconds()
}

// Under50KB bounds the TCD fragment's Hadoop class, flows below 50 KB
// (metric under50k_slowdown).
const Under50KB = 50_000

// losslessFlows are the FCT measure's per-flow slowdowns and the TCD
// fragment's Hadoop class, flows below 50 KB.
func losslessFlows(v MeasureView, _ string) Samples {
	out := fctFlows(v)
	for _, f := range v.a.Flows {
		if f.Size >= Under50KB {
			continue
		}
		if s := censoredSlowdown(f); !math.IsNaN(s) {
			out["under50k_slowdown"] = append(out["under50k_slowdown"], Sample{Flow: f.ID, V: s})
		}
	}
	return out
}
