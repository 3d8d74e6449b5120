package report

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// A measure turns one variant's analysis into its metrics. Measures are
// code (they read the analysis); which one an experiment uses, and on
// which workload entry, is its file's `reproduce.measure` and `group`.
type Measure struct {
	Metrics []Metric
	fn      func(v MeasureView, group string) Metrics
	// FlowMetrics are numbers per flow (a percentile over the pooled
	// flows of the runs is taken of them), flows measures them.
	FlowMetrics []Metric
	flows       func(v MeasureView, group string) Samples
}

// measures are the suite's measures by name.
var measures = map[string]Measure{
	"recovery": {
		Metrics: []Metric{{"recovery", "long flow back to 90 % of the link after the short flow", "ms"},
			{"recovery_rtts", "the same", "base RTTs"}, {"short_fct", "short flow FCT", "ms"}, {"base_rtt", "base RTT", "ms"}},
		fn: measureRecovery,
	},
	"queue": {Metrics: queueMetricList, fn: func(v MeasureView, group string) Metrics {
		m := Metrics{}
		queueMetrics(v, group, m)
		return m
	}},
	"mice": {
		Metrics: []Metric{{"mice_p50", "mice FCT p50 (packet FCT)", "ms"}, {"mice_p99", "mice FCT p99 (packet FCT)", "ms"},
			{"mice_data_rtts", "mice latency p50 (half a TCP mouse's FCT: one RTT, one wait)", "base RTTs"},
			{"mice_queue", "queue a median mouse waited behind, per crossing", "KB"}, {"queue_p50", "queue p50", "KB"},
			{"queue_p99", "queue p99", "KB"}, {"base_rtt", "base RTT", "ms"}},
		fn:          measureMice,
		FlowMetrics: miceFlowMetrics,
		flows:       miceFlows,
	},
	"fairness": {
		Metrics: []Metric{{"jain_mean", "mean Jain index (>= 2 flows)", ""}, {"converged", "changes followed by fairness", "%"},
			{"worst_conv", "slowest time to fairness", "ms"}, {"worst_conv_rtts", "slowest time to fairness", "base RTTs"}, {"base_rtt", "base RTT", "ms"}},
		fn: measureFairness,
	},
	"convergence": {
		Metrics: []Metric{{"time_to_fair", "time to fairness from the start", "ms"}, {"jain_mean", "mean Jain index (>= 2 flows)", ""}},
		fn:      measureConvergence,
	},
	"fct": {Metrics: fctMetrics, fn: func(v MeasureView, _ string) Metrics { return measureFCT(v) },
		FlowMetrics: fctFlowMetrics, flows: func(v MeasureView, _ string) Samples { return fctFlows(v) }},
	"vai_incast": {Metrics: vaiIncastMetrics, fn: measureVAIIncast},
	"circuit":    {Metrics: circuitMetrics, fn: measureCircuit},
	"lossless": {Metrics: losslessMetrics, fn: measureLossless,
		FlowMetrics: losslessFlowMetrics, flows: losslessFlows},
}

// MeasureNames lists the measures, for error messages.
func MeasureNames() []string {
	var out []string
	for n := range measures {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// throughputWin is "line rate": 90 % of the link in one throughput window
// (the analysis window: 1 ms by default, an experiment's analysis.window).
const throughputWin = 0.9

// drainBytes is "drained": at most four packets queued.
const drainBytes = 6_000

func measureRecovery(v MeasureView, _ string) Metrics {
	m := Metrics{"base_rtt": float64(v.BaseRTT())}
	longs := v.GroupFlows("long")
	end, ok := v.GroupEnd("short")
	if len(longs) == 0 || !ok {
		return m
	}
	m["recovery"] = v.recovery(longs[0].ID, end, throughputWin)
	m["recovery_rtts"] = m["recovery"] / m["base_rtt"]
	m["short_fct"] = v.fctPercentile("short", 100)
	return m
}

// queueMetrics measures the bottleneck queue around a group's flows.
func queueMetrics(v MeasureView, group string, m Metrics) {
	start, ok1 := v.GroupStart(group)
	end, ok2 := v.GroupEnd(group)
	q := v.BottleneckQueue()
	rtt := float64(v.BaseRTT())
	m["base_rtt"] = rtt
	if !ok1 || !ok2 || q == nil {
		return
	}
	m["queue_peak"] = queuePeak(q, start, end+10*time.Millisecond)
	if bdp := v.rateBps * rtt / 8e9; bdp > 0 {
		m["queue_peak_bdps"] = m["queue_peak"] / bdp
	}
	m["drain"] = drainTime(q, start, end, drainBytes)
	if rtt > 0 {
		m["drain_rtts"] = m["drain"] / rtt
	}
	m["util_during"] = txUtilisation(q, start, end, v.rateBps)
	// After the incast, only while the long flow still sends: ten base
	// RTTs, at least 20 ms (twenty of the 1 ms throughput windows).
	after := max(10*time.Duration(rtt), 20*time.Millisecond)
	if longEnd, ok := v.GroupEnd("long"); ok && longEnd > end+after/2 {
		m["util_after"] = txUtilisation(q, end, min(end+after, longEnd), v.rateBps)
	}
}

var queueMetricList = []Metric{
	{"queue_peak", "queue peak", "KB"}, {"queue_peak_bdps", "queue peak", "BDPs"}, {"drain", "time to drain (<= 6 KB)", "ms"},
	{"drain_rtts", "time to drain", "base RTTs"}, {"util_during", "bottleneck use during the burst", "%"},
	{"util_after", "bottleneck use in the 10 base RTTs after it", "%"}, {"base_rtt", "base RTT", "ms"},
}

func measureMice(v MeasureView, group string) Metrics {
	if group == "" {
		group = "mice"
	}
	m := Metrics{"base_rtt": float64(v.BaseRTT())}
	m["mice_p50"] = v.pcapFCTPercentile(group, 50)
	m["mice_p99"] = v.pcapFCTPercentile(group, 99)
	// A TCP mouse's packet FCT (SYN to the last ACK) is two base RTTs and
	// two waits in the bottleneck queue: its SYN and its data each cross
	// it, where the papers' one-packet RDMA mice cross it once. Half of it
	// is their latency: one base RTT and one wait.
	m["mice_data_rtts"] = m["mice_p50"] / 2 / m["base_rtt"]
	// One wait, in bytes of the bottleneck: the standing queue it met.
	m["mice_queue"] = max(0, m["mice_p50"]-2*m["base_rtt"]) / 2 * v.rateBps / 8e9
	start, ok1 := v.GroupStart(group)
	end, ok2 := v.GroupEnd(group)
	if q := v.BottleneckQueue(); q != nil && ok1 && ok2 {
		m["queue_p50"] = queueQuantile(q, start, end, 50)
		m["queue_p99"] = queueQuantile(q, start, end, 99)
	}
	return m
}

func measureFairness(v MeasureView, _ string) Metrics {
	m := Metrics{"base_rtt": float64(v.BaseRTT())}
	g := v.fairGroup()
	if g == nil {
		return m
	}
	m["jain_mean"] = meanJain(g)
	m["worst_conv"], m["converged"] = worstConvergence(g)
	// A change never followed by fairness counts as never converging.
	if m["converged"] < 1 {
		m["worst_conv"] = math.Inf(1)
	}
	m["worst_conv_rtts"] = m["worst_conv"] / m["base_rtt"]
	return m
}

var fctMetrics = []Metric{
	{"short_p999", "p99.9 slowdown (packet FCT), flows < 10 KB", "x"}, {"short_n", "flows < 10 KB", ""},
	{"medium_p999", "p99.9 slowdown (packet FCT), 100 KB-1 MB", "x"}, {"medium_n", "flows 100 KB-1 MB", ""},
	{"long_p999", "p99.9 slowdown (packet FCT), >= 1 MB", "x"}, {"long_n", "flows >= 1 MB", ""},
	{"short_retx", "flows < 10 KB that retransmitted", ""},
	{"app_late", "flows whose application FCT exceeds the packet FCT by > 10 ms", ""},
	{"all_p99", "p99 slowdown (packet FCT), all flows", "x"}, {"failed", "flows not completed", ""},
	{"queue_p99", "busiest port queue p99", "KB"},
}

func measureFCT(v MeasureView) Metrics {
	m := Metrics{}
	put := func(key string, lo, hi uint64, p float64) {
		x, n := v.slowdownPercentile(lo, hi, p)
		m[key+"_p999"], m[key+"_n"] = x, float64(n)
	}
	put("short", 0, 10_000, 99.9)
	put("medium", 100_000, 1_000_000, 99.9)
	put("long", 1_000_000, 0, 99.9)
	m["short_retx"] = v.retransmitting(0, 10_000)
	m["app_late"] = v.appLate(10 * time.Millisecond)
	m["all_p99"], _ = v.slowdownPercentile(0, 0, 99)
	m["failed"] = float64(v.failed())
	if q := v.BottleneckQueue(); q != nil {
		m["queue_p99"] = q.Summary.P99.F()
	}
	return m
}

var vaiIncastMetrics = []Metric{{"jain_mean", "mean Jain index (>= 2 flows)", ""}, {"finish_spread", "finish-time spread", "ms"},
	{"inverted", "later-started flows finishing earlier", "%"}, {"queue_p50", "queue p50", "KB"}, {"queue_p99", "queue p99", "KB"}}

func measureVAIIncast(v MeasureView, group string) Metrics {
	if group == "" {
		group = "incast"
	}
	m := Metrics{}
	if g := v.fairGroup(); g != nil {
		m["jain_mean"] = meanJain(g)
	}
	m["finish_spread"], m["inverted"] = v.finishSpread(group)
	if q := v.BottleneckQueue(); q != nil {
		m["queue_p50"], m["queue_p99"] = q.Summary.P50.F(), q.Summary.P99.F()
	}
	return m
}

// Unit is the unit of a measure's metric, for the claims' checks.
func (ms Measure) Unit(key string) (string, error) {
	all := append(slices.Clone(ms.Metrics), ms.FlowMetrics...)
	for _, m := range all {
		if m.Key == key {
			return m.Unit, nil
		}
	}
	var have []string
	for _, m := range all {
		have = append(have, m.Key)
	}
	return "", fmt.Errorf("no metric %q (the measure has %v)", key, have)
}

// PerFlow reports whether the metric is one number per flow.
func (ms Measure) PerFlow(key string) bool {
	return slices.ContainsFunc(ms.FlowMetrics, func(m Metric) bool { return m.Key == key })
}

// measureConvergence is the time from the first flow's start until the
// bottleneck's flows are first fair (the experiment's analysis: window,
// fairness threshold and hold), +Inf when they never are.
func measureConvergence(v MeasureView, _ string) Metrics {
	m := Metrics{}
	g := v.fairGroup()
	start, ok := v.GroupStart("")
	if g == nil || !ok {
		return m
	}
	m["jain_mean"] = meanJain(g)
	if g.FirstFair < 0 {
		m["time_to_fair"] = math.Inf(1)
	} else {
		m["time_to_fair"] = float64(g.FirstFair - start)
	}
	return m
}
