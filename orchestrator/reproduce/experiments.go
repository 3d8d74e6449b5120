package reproduce

import (
	"fmt"
	"math"
	"time"
)

// lessThan is the claim "metric of a < metric of b".
func lessThan(id, paper, a, b, key, what string, format func(float64) string, note string) Claim {
	return Claim{ID: id, Paper: paper, Needs: []string{a, b}, Note: note,
		Check: func(m map[string]Metrics) (string, bool, bool) {
			x, y := m[a].Get(key), m[b].Get(key)
			s := fmt.Sprintf("%s: %s %s, %s %s", what, a, format(x), b, format(y))
			return s, x < y, finite(x, y)
		}}
}

// atMost is the claim "metric of cc <= limit".
func atMost(id, paper, cc, key, what string, limit float64, format func(float64) string, note string) Claim {
	return Claim{ID: id, Paper: paper, Needs: []string{cc}, Note: note,
		Check: func(m map[string]Metrics) (string, bool, bool) {
			x := m[cc].Get(key)
			return fmt.Sprintf("%s of %s: %s (limit %s)", what, cc, format(x), format(limit)), x <= limit, finite(x)
		}}
}

// atLeast is the claim "metric of cc >= limit".
func atLeast(id, paper, cc, key, what string, limit float64, format func(float64) string, note string) Claim {
	return Claim{ID: id, Paper: paper, Needs: []string{cc}, Note: note,
		Check: func(m map[string]Metrics) (string, bool, bool) {
			x := m[cc].Get(key)
			return fmt.Sprintf("%s of %s: %s (at least %s)", what, cc, format(x), format(limit)), x >= limit, finite(x)
		}}
}

func rtts(x float64) string {
	if math.IsInf(x, 1) {
		return "never"
	}
	return f2(x) + " base RTTs"
}

func pct(x float64) string { return fmt.Sprintf("%.0f %%", 100*x) }

const rttNote = "Scaled: 100 Mbit/s links and a ~300 us base RTT that is mostly serialisation and host stack, not propagation (docs/reproduction.md)."

// queueMetrics measures the bottleneck queue around a group's flows.
func queueMetrics(v view, group string, m Metrics) {
	start, ok1 := v.groupStart(group)
	end, ok2 := v.groupEnd(group)
	q := v.bottleneckQueue()
	rtt := float64(v.baseRTT())
	m["base_rtt"] = rtt
	if !ok1 || !ok2 || q == nil {
		return
	}
	m["queue_peak"] = queuePeak(q, start, end+10*time.Millisecond)
	m["drain"] = drainTime(q, start, end, drainBytes)
	if rtt > 0 {
		m["drain_rtts"] = m["drain"] / rtt
	}
	m["util_during"] = txUtilisation(q, start, end, v.rateBps)
	// After the incast, only while the long flow still sends.
	if longEnd, ok := v.groupEnd("long"); ok && longEnd > end+10*time.Millisecond {
		m["util_after"] = txUtilisation(q, end, min(end+100*time.Millisecond, longEnd), v.rateBps)
	}
}

var queueMetricList = []Metric{
	{"queue_peak", "queue peak", "KB"}, {"drain", "time to drain (<= 6 KB)", "ms"},
	{"drain_rtts", "time to drain", "base RTTs"}, {"util_during", "bottleneck use during the incast", "%"},
	{"util_after", "bottleneck use 100 ms after it", "%"}, {"base_rtt", "base RTT", "ms"},
}

func hpccLongShort() *Experiment {
	return &Experiment{
		Name: "hpcc-long-short", Title: "Long-Short rate recovery", Paper: "HPCC (SIGCOMM'19) 5.2, Figure 9a-b",
		File:  "hpcc-long-short.yaml",
		Needs: []Need{lawNeed("hpcc", "hpcc", starRTTns), cubic()},
		Metrics: []Metric{{"recovery", "long flow back to 90 % of the link after the short flow", "ms"},
			{"recovery_rtts", "the same", "base RTTs"}, {"short_fct", "short flow (1 MB) FCT", "ms"}, {"base_rtt", "base RTT", "ms"}},
		Measure: func(v view) Metrics {
			m := Metrics{"base_rtt": float64(v.baseRTT())}
			longs := v.groupFlows("long")
			end, ok := v.groupEnd("short")
			if len(longs) == 0 || !ok {
				return m
			}
			m["recovery"] = v.recovery(longs[0].ID, end, throughputWin)
			m["recovery_rtts"] = m["recovery"] / m["base_rtt"]
			m["short_fct"] = v.fctPercentile("short", 100)
			return m
		},
		Claims: []Claim{atMost("recovery", "HPCC recovers the long flow's rate right after the short flow ends (DCQCN has not after 2 ms, >350 RTTs).",
			"hpcc", "recovery_rtts", "recovery to 90 % of the link", 20, rtts,
			rttNote+" 'Right after' is taken as within 20 base RTTs (the throughput window is 1 ms, ~3 base RTTs).")},
		Figures: []string{"throughput"},
	}
}

func hpccIncast() *Experiment {
	return &Experiment{
		Name: "hpcc-incast", Title: "7:1 incast onto a long flow", Paper: "HPCC (SIGCOMM'19) 5.2, Figure 9c-d",
		File:    "hpcc-incast.yaml",
		Needs:   []Need{lawNeed("hpcc", "hpcc", starRTTns), cubic()},
		Metrics: queueMetricList,
		Measure: func(v view) Metrics { m := Metrics{}; queueMetrics(v, "incast", m); return m },
		Claims: []Claim{
			atMost("drain", "HPCC reacts after about one round trip, so the queue drains quickly.", "hpcc", "drain_rtts",
				"time to drain", 20, rtts,
				rttNote+" Queue sampled every 100 us; 'quickly' is taken as within 20 base RTTs of the incast's start."),
			lessThan("peak", "HPCC's queue stays far below the queue of a scheme that waits for the queue to build (DCQCN: 550 KB; here cubic, which fills the buffer).",
				"hpcc", "cubic", "queue_peak", "queue peak", kb, "cubic stands in for DCQCN, which cclab does not have."),
		},
		Figures: []string{"queue", "throughput"},
	}
}

func hpccMice() *Experiment {
	return &Experiment{
		Name: "hpcc-mice", Title: "Mice latency through a link saturated by two elephants", Paper: "HPCC (SIGCOMM'19) 5.2, Figure 9e-f",
		File:  "hpcc-mice.yaml",
		Needs: []Need{lawNeed("hpcc", "hpcc", starRTTns), cubic()},
		Metrics: []Metric{{"mice_p50", "mice FCT p50", "ms"}, {"mice_p99", "mice FCT p99", "ms"},
			{"mice_rtts", "mice FCT p50", "base RTTs"}, {"queue_p50", "queue p50", "KB"}, {"queue_p99", "queue p99", "KB"}, {"base_rtt", "base RTT", "ms"}},
		Measure: func(v view) Metrics {
			m := Metrics{"base_rtt": float64(v.baseRTT())}
			m["mice_p50"] = v.fctPercentile("mice", 50)
			m["mice_p99"] = v.fctPercentile("mice", 99)
			m["mice_rtts"] = m["mice_p50"] / m["base_rtt"]
			start, ok1 := v.groupStart("mice")
			end, ok2 := v.groupEnd("mice")
			if q := v.bottleneckQueue(); q != nil && ok1 && ok2 {
				m["queue_p50"] = queueQuantile(q, start, end, 50)
				m["queue_p99"] = queueQuantile(q, start, end, 99)
			}
			return m
		},
		Claims: []Claim{
			atMost("queue", "HPCC keeps a near-zero queue on a link saturated by two elephants.", "hpcc", "queue_p50",
				"median queue", drainBytes, kb, "Near zero is taken as at most four packets (6 KB)."),
			lessThan("latency", "So mice latency stays close to the base RTT, lower than with a standing queue (DCQCN > 35 us; here cubic).",
				"hpcc", "cubic", "mice_p50", "mice FCT p50", ms,
				"A mouse's FCT here includes the TCP handshake (one more RTT) that RDMA does not have; cubic stands in for DCQCN."),
		},
		Figures: []string{"queue"},
	}
}

func fairnessJoinLeave() *Experiment {
	conv := func(cc, paper string) Claim {
		return Claim{ID: "fair-" + cc, Paper: paper, Needs: []string{cc}, Note: "Phases of 200 ms (the paper: 1 s); fair = Jain >= 0.95 held for 10 ms (analysis defaults); 'quickly' = within 50 ms of each change.",
			Check: func(m map[string]Metrics) (string, bool, bool) {
				share, worst := m[cc].Get("converged"), m[cc].Get("worst_conv")
				s := fmt.Sprintf("%s: fair after %s of the joins/leaves, slowest %s (mean Jain %s)", cc, pct(share), ms(worst), f2(m[cc].Get("jain_mean")))
				return s, share == 1 && worst <= 50e6, finite(share)
			}}
	}
	return &Experiment{
		Name: "fairness-join-leave", Title: "Four flows join one by one and leave", Paper: "HPCC (SIGCOMM'19) 5.2 Figure 9g-h; PowerTCP (NSDI'22) 4.2 Figure 5",
		File: "fairness-join-leave.yaml",
		Needs: []Need{lawNeed("hpcc", "hpcc", starRTTns), lawNeed("powertcp", "powertcp", starRTTns),
			lawNeed("theta_powertcp", "theta_powertcp", starRTTns), cubic()},
		Metrics: []Metric{{"jain_mean", "mean Jain index (>= 2 flows)", ""}, {"converged", "changes followed by fairness", "%"},
			{"worst_conv", "slowest time to fairness", "ms"}},
		Measure: func(v view) Metrics {
			m := Metrics{}
			if g := v.fairGroup(); g != nil {
				m["jain_mean"] = meanJain(g)
				m["worst_conv"], m["converged"] = worstConvergence(g)
			}
			return m
		},
		Claims: []Claim{
			conv("hpcc", "HPCC provides good fairness even in a short time scale as flows join and leave."),
			conv("powertcp", "PowerTCP stabilises to a fair share quickly, both when flows arrive and when they leave."),
			conv("theta_powertcp", "theta-PowerTCP likewise (Figure 5h)."),
		},
		Figures: []string{"throughput", "jain"},
	}
}

func incastClaims(large bool) []Claim {
	note := rttNote + " 'Without losing throughput': the bottleneck sends >= 90 % of its rate during the incast and in the 100 ms after it."
	cs := []Claim{
		atLeast("ptcp-util", "PowerTCP mitigates the incast without losing throughput.", "powertcp", "util_after", "bottleneck use after the incast", throughputWin, pct, note),
		atMost("ptcp-drain", "PowerTCP reaches near-zero queues quickly.", "powertcp", "drain_rtts", "time to drain", 20, rtts, note),
	}
	if large {
		cs = append(cs,
			atLeast("theta-util", "theta-PowerTCP also reacts quickly without losing throughput at large fan-in.", "theta_powertcp", "util_after", "bottleneck use after the incast", throughputWin, pct, note),
			lessThan("hpcc-loses", "HPCC loses throughput right after reacting to the large incast; PowerTCP does not.", "hpcc", "powertcp", "util_after", "bottleneck use after the incast", pct, note))
	} else {
		cs = append(cs, lessThan("peak", "HPCC reaches a higher queue than PowerTCP at the onset (about 2x).", "powertcp", "hpcc", "queue_peak", "queue peak", kb, note))
	}
	return cs
}

func powertcpIncast() *Experiment {
	return &Experiment{
		Name: "powertcp-incast", Title: "10:1 incast onto a long flow", Paper: "PowerTCP (NSDI'22) 4.2, Figure 4 (top)",
		File: "powertcp-incast.yaml",
		Needs: []Need{lawNeed("powertcp", "powertcp", starRTTns), lawNeed("theta_powertcp", "theta_powertcp", starRTTns),
			lawNeed("hpcc", "hpcc", starRTTns), cubic()},
		Metrics: queueMetricList,
		Measure: func(v view) Metrics { m := Metrics{}; queueMetrics(v, "incast", m); return m },
		Claims:  incastClaims(false),
		Figures: []string{"queue", "throughput"},
	}
}

func powertcpIncastLarge() *Experiment {
	e := powertcpIncast()
	e.Name, e.File = "powertcp-incast-large", "powertcp-incast-large.yaml"
	e.Title = "10:1 incast plus a 63:1 query response onto a long flow"
	e.Paper = "PowerTCP (NSDI'22) 4.2, Figure 4 (bottom, 255:1 scaled to 63:1)"
	e.Measure = func(v view) Metrics { m := Metrics{}; queueMetrics(v, "query", m); return m }
	e.Claims = incastClaims(true)
	return e
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

func measureFCT(v view) Metrics {
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
	if q := v.bottleneckQueue(); q != nil {
		m["queue_p99"] = q.Summary.P99.F()
	}
	return m
}

func fctNeeds(rtt int) []Need {
	return []Need{lawNeed("powertcp", "powertcp", rtt), lawNeed("theta_powertcp", "theta_powertcp", rtt),
		lawNeed("hpcc", "hpcc", rtt), {Name: "dctcp", Law: "dctcp"}, cubic()}
}

const fctNote = "Slowdowns from the packet FCT (captures), not the application's (see reproduction.md). A few hundred flows: p99.9 of fewer than 1000 flows is the largest slowdown of the bin (nearest rank), so one flow decides it."

func websearch(name, load string) *Experiment {
	e := &Experiment{
		Name: name, Title: "WebSearch at " + load + " % load", Paper: "PowerTCP (NSDI'22) 4.2, Figure 6",
		File: name + ".yaml", Needs: fctNeeds(fattreeRTTns), Metrics: fctMetrics, Measure: measureFCT,
		Figures: []string{"slowdown"},
	}
	short := "PowerTCP improves p99.9 FCT of short flows (< 10 KB) over HPCC (20 %: by 9 %; 60 %: by 33 %)."
	theta := "theta-PowerTCP improves p99.9 FCT of short flows over HPCC (60 %: by 36 %)."
	e.Claims = []Claim{
		lessThan("ptcp-short", short, "powertcp", "hpcc", "short_p999", "p99.9 slowdown < 10 KB", f2, fctNote),
		lessThan("theta-short", theta, "theta_powertcp", "hpcc", "short_p999", "p99.9 slowdown < 10 KB", f2, fctNote),
		lessThan("ptcp-medium", "PowerTCP improves p99.9 FCT of medium flows (100 KB-1 MB) over HPCC (20 %: by 33 %).", "powertcp", "hpcc", "medium_p999", "p99.9 slowdown 100 KB-1 MB", f2, fctNote),
	}
	if load == "60" {
		e.Claims = append(e.Claims, lessThan("theta-medium", "theta-PowerTCP is worse than PowerTCP for medium flows (RTT does not signal under-use).",
			"powertcp", "theta_powertcp", "medium_p999", "p99.9 slowdown 100 KB-1 MB", f2, fctNote))
	}
	return e
}

func websearchIncast() *Experiment {
	e := websearch("websearch-incast", "20")
	e.Title = "WebSearch at 20 % load plus incast queries"
	e.Paper = "PowerTCP (NSDI'22) 4.2, Figure 7c-d"
	e.Claims = []Claim{
		lessThan("ptcp-short", "With incasts added, PowerTCP keeps short-flow p99.9 FCT below HPCC's.", "powertcp", "hpcc", "short_p999", "p99.9 slowdown < 10 KB", f2, fctNote),
		lessThan("ptcp-long", "... and long-flow p99.9 FCT too.", "powertcp", "hpcc", "long_p999", "p99.9 slowdown >= 1 MB", f2, fctNote),
	}
	return e
}

func vaiNeeds(rtt int) []Need {
	return []Need{lawNeed("hpcc", "hpcc", rtt), lawNeed("hpcc", "hpcc_vaisf", rtt, vaiSF...),
		lawNeed("swift", "swift", rtt), lawNeed("swift", "swift_vaisf", rtt, vaiSF...), cubic()}
}

func vaiIncast() *Experiment {
	const note = "Stagger scaled with the link rate (20 us at 100 Gbit/s -> 20 ms at 100 Mbit/s) so each 1 MB flow overlaps the same number of joins."
	var claims []Claim
	for _, law := range []string{"hpcc", "swift"} {
		claims = append(claims,
			atLeast(law+"-inversion", fmt.Sprintf("Default %s: flows that start last finish first.", map[string]string{"hpcc": "HPCC", "swift": "Swift"}[law]), law, "inverted",
				"share of later-started flows finishing earlier", 0.5, pct, note),
			lessThan(law+"-spread", "With VAI and SF the finish times are much closer together.", law+"_vaisf", law, "finish_spread", "finish-time spread", ms, note),
			Claim{ID: law + "-jain", Paper: "With VAI and SF the Jain index is nearer 1 (converges much quicker).", Needs: []string{law, law + "_vaisf"}, Note: note,
				Check: func(m map[string]Metrics) (string, bool, bool) {
					a, b := m[law+"_vaisf"].Get("jain_mean"), m[law].Get("jain_mean")
					return fmt.Sprintf("mean Jain: %s_vaisf %.3f, %s %.3f", law, a, law, b), a > b, finite(a, b)
				}})
	}
	return &Experiment{
		Name: "vai-incast", Title: "16:1 staggered incast, with and without VAI + SF", Paper: "Fast convergence to fairness (VAI/SF) III-E and VI, Figures 1-3, 5, 6, 8, 9",
		File: "vai-incast.yaml", Needs: vaiNeeds(starRTTns),
		Metrics: []Metric{{"jain_mean", "mean Jain index (>= 2 flows)", ""}, {"finish_spread", "finish-time spread", "ms"},
			{"inverted", "later-started flows finishing earlier", "%"}, {"queue_p99", "queue p99", "KB"}},
		Measure: func(v view) Metrics {
			m := Metrics{}
			if g := v.fairGroup(); g != nil {
				m["jain_mean"] = meanJain(g)
			}
			m["finish_spread"], m["inverted"] = v.finishSpread("incast")
			if q := v.bottleneckQueue(); q != nil {
				m["queue_p99"] = q.Summary.P99.F()
			}
			return m
		},
		Claims:  claims,
		Figures: []string{"jain", "start_finish", "queue"},
	}
}

func vaiHadoop() *Experiment {
	return &Experiment{
		Name: "vai-hadoop", Title: "FB_Hadoop at 50 % load, with and without VAI + SF", Paper: "Fast convergence to fairness (VAI/SF) VI, Figure 10",
		File: "vai-hadoop.yaml", Needs: vaiNeeds(hadoopRTTns), Metrics: fctMetrics, Measure: measureFCT,
		Claims: []Claim{
			lessThan("hpcc-long", "VAI and SF cut HPCC's p99.9 slowdown of long flows (> 1 MB) (paper: 30-40x to 10-15x).", "hpcc_vaisf", "hpcc", "long_p999", "p99.9 slowdown >= 1 MB", f2, fctNote),
			lessThan("swift-long", "... and Swift's.", "swift_vaisf", "swift", "long_p999", "p99.9 slowdown >= 1 MB", f2, fctNote),
		},
		Figures: []string{"slowdown"},
	}
}

// Smoke is the suite's end-to-end test: a shortened Long-Short with the
// kernel's cubic only (no law to load, no switch needed).
func Smoke() *Experiment {
	return &Experiment{
		Name: "smoke", Title: "Long-Short, shortened (make test)", Paper: "HPCC (SIGCOMM'19) 5.2, Figure 9a (shape only)",
		File: "smoke.yaml", Needs: []Need{cubic()},
		Metrics: []Metric{{"recovery", "long flow back to 90 % of the link after the short flow", "ms"}, {"short_fct", "short flow FCT", "ms"}},
		Measure: func(v view) Metrics {
			m := Metrics{}
			longs := v.groupFlows("long")
			end, ok := v.groupEnd("short")
			if len(longs) > 0 && ok {
				m["recovery"] = v.recovery(longs[0].ID, end, throughputWin)
			}
			m["short_fct"] = v.fctPercentile("short", 100)
			return m
		},
		Claims: []Claim{atMost("recovery", "(smoke) the long flow gets the link back within 50 ms of the short flow's end.", "cubic", "recovery",
			"recovery to 90 % of the link", 50e6, ms, "Not a paper claim: checks the suite end to end.")},
		Figures: []string{"throughput"},
	}
}
