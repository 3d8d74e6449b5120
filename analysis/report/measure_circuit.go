package report

import (
	"math"
	"slices"
	"strings"
	"time"

	"cclab/analysis/metrics"
	"cclab/analysis/series"
)

// The circuit measure (experiments/reproduce/powertcp-rdcn.yaml): a link
// the run's schedule raises to a circuit's rate for its days
// (LinkWindow); each day, how much of the circuit the flows used
// and how soon they filled it, and the queue in front of it in time.

// fillShare is "filled": from then on the circuit port transmits at
// least this share of the circuit's rate over half a base RTT. (What it
// transmits is counted where the next switch receives it, in the batches
// the kernel hands packets over in: a rate over one 100 us queue sample,
// or even 1 ms, swings far above the link's.)
const fillShare = 0.8

var circuitMetrics = []Metric{
	{"circuit_util", "circuit use over its days (mean of the days)", "%"},
	{"fill_rtts", "time from a day's start to 80 % of the circuit (median of the days)", "base RTTs"},
	{"days", "circuit days measured", ""},
	{"queue_delay_p99", "queueing delay at the circuit's port, p99 (queue / the rate in force)", "ms"},
	{"queue_p99", "queue at the circuit's port, p99", "KB"},
	{"base_rtt", "base RTT", "ms"},
}

func measureCircuit(v MeasureView, _ string) Metrics {
	m := Metrics{"base_rtt": float64(v.BaseRTT())}
	var days []LinkWindow
	for _, w := range v.a.LinkWindows {
		if !w.Open && w.End > w.Start {
			days = append(days, w)
		}
	}
	if len(days) == 0 {
		return m
	}
	q := circuitPort(v, days)
	if q == nil {
		return m
	}
	rtt := float64(v.BaseRTT())
	var utils, fills []float64
	for _, d := range days {
		utils = append(utils, txUtilisation(q, d.Start, d.End, float64(d.RateBps)))
		fill := math.Inf(1)
		half := time.Duration(rtt / 2)
		for _, p := range q.TxRate {
			if p.T < d.Start || p.T+half > d.End {
				continue
			}
			if txUtilisation(q, p.T, p.T+half, float64(d.RateBps)) >= fillShare {
				fill = float64(p.T - d.Start)
				break
			}
		}
		if rtt > 0 {
			fills = append(fills, fill/rtt)
		}
	}
	m["days"] = float64(len(days))
	var sum float64
	for _, u := range utils {
		sum += u
	}
	m["circuit_util"] = sum / float64(len(utils))
	slices.Sort(fills)
	if len(fills) > 0 {
		m["fill_rtts"] = fills[len(fills)/2]
		if len(fills)%2 == 0 {
			m["fill_rtts"] = (fills[len(fills)/2-1] + fills[len(fills)/2]) / 2
		}
	}
	// Queueing delay: the queue over the rate that drains it, the
	// circuit's during a day, the link's own otherwise; from the first
	// day's start to the last day's end (the cycles measured).
	base := float64(days[0].BaseBps)
	var delays, qs []float64
	for _, s := range q.Samples {
		if s.T < days[0].Start || s.T > days[len(days)-1].End {
			continue
		}
		rate := base
		for _, d := range days {
			if s.T >= d.Start && s.T < d.End {
				rate = float64(d.RateBps)
			}
		}
		if rate > 0 {
			delays = append(delays, s.V*8/rate*1e9)
			qs = append(qs, s.V)
		}
	}
	if len(delays) > 0 {
		slices.Sort(delays)
		slices.Sort(qs)
		m["queue_delay_p99"] = metrics.Percentile(delays, 99)
		m["queue_p99"] = metrics.Percentile(qs, 99)
	}
	return m
}

// circuitPort is the port of the raised link that carried more during
// its days: the circuit's sending end.
func circuitPort(v MeasureView, days []LinkWindow) *series.Queue {
	a, b, ok := strings.Cut(days[0].Links[0], ":")
	if !ok {
		a, b, ok = strings.Cut(days[0].Links[0], ">")
	}
	if !ok {
		return nil
	}
	var best *series.Queue
	bestBits := -1.0
	for i := range v.a.Queues {
		q := &v.a.Queues[i]
		if !(q.Port.Node == a && q.Port.Iface == b) && !(q.Port.Node == b && q.Port.Iface == a) {
			continue
		}
		var bits float64
		for _, d := range days {
			if u := txUtilisation(q, d.Start, d.End, 1); !math.IsNaN(u) {
				bits += u * float64(d.End-d.Start) / float64(time.Second)
			}
		}
		if bits > bestBits {
			best, bestBits = q, bits
		}
	}
	return best
}
