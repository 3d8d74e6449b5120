package fidelity

import (
	"fmt"
	"strings"
	"time"
)

// Lossless is what a lossless run (PFC, docs/lossless.md) measured of its
// pauses and losses; nil in a lossy run.
type Lossless struct {
	// QdiscDrops are the ports (switch and host) whose qdisc dropped
	// packets: a lossless fabric drops none.
	QdiscDrops []PortDrops
	// Headroom is what an ingress port may take above its Xoff; Auto
	// says it is the model's 2 x delay x rate + 2 MTU, which a faithful
	// pause never overruns. Overruns are the ingress ports whose queue
	// went above Xoff + Headroom.
	Headroom int64
	Auto     bool
	Overruns []PortOverrun
	// Lateness is when the controller's TBF changes took effect after
	// their due time (the crossing plus the link's delay); LinkDelay the
	// smallest delay of a lossless link, which the bars scale with.
	Lateness  LatenessStats
	LinkDelay time.Duration
	// LostEvents are crossings the switch could not post (its ring
	// buffer full): a pause or a resume never applied.
	LostEvents uint64
}

// PortDrops is one port's qdisc drops.
type PortDrops struct {
	Node, Iface string
	Drops       uint64
}

// PortOverrun is an ingress port's largest occupancy above Xoff.
type PortOverrun struct {
	Node, Iface string
	Over        int64
}

// LatenessStats are a lateness's quantiles over N events.
type LatenessStats struct {
	N        int
	P50, P99 time.Duration
	Max      time.Duration
}

// lossless judges a lossless run: nothing dropped at any port's qdisc
// (the interfaces, CPU backlogs and delay line are "stray drops" and "CPU
// backlog"), every crossing posted, the pauses applied within the delay
// line's bars of their due time, and, with the model's headroom, no
// ingress queue above Xoff + headroom. With a headroom the file gives,
// overruns are that setting's consequence, counted and not judged (a
// real switch would have dropped them; this one holds them).
func lossless(in Inputs, lim Limits, add func(Check)) {
	l := in.Lossless
	if l == nil {
		return
	}
	var n uint64
	var where []string
	for _, d := range l.QdiscDrops {
		n += d.Drops
		if len(where) < 4 {
			where = append(where, fmt.Sprintf("%s/%s %d", d.Node, d.Iface, d.Drops))
		}
	}
	detail := "no port dropped a packet"
	if n > 0 {
		detail = fmt.Sprintf("%d packets dropped by ports' queues of a lossless fabric: %s", n, strings.Join(where, ", "))
	}
	add(Check{Name: "lossless", Value: float64(n), Limit: 0, Unit: "packets", OK: n == 0, Detail: detail})

	add(Check{Name: "pfc events", Value: float64(l.LostEvents), Limit: 0, Unit: "crossings lost", OK: l.LostEvents == 0,
		Detail: fmt.Sprintf("%d Xoff/Xon crossings the switch could not post (each a pause or resume never applied)", l.LostEvents)})

	var worst PortOverrun
	for _, o := range l.Overruns {
		if o.Over > worst.Over {
			worst = o
		}
	}
	hr := Check{Name: "pfc headroom", Value: float64(worst.Over), Limit: float64(l.Headroom), Unit: "bytes above xoff",
		OK: !l.Auto || len(l.Overruns) == 0}
	switch {
	case len(l.Overruns) == 0:
		hr.Detail = fmt.Sprintf("no ingress queue went above xoff + its %d B headroom", l.Headroom)
	case l.Auto:
		// The model leaves out what arrives late: each of these lets
		// the link's rate times it more in after the Xoff.
		lineMax := time.Duration(0)
		if in.Line != nil {
			lineMax = in.Line.MaxLate
		}
		hr.Detail = fmt.Sprintf("%d ingress ports above xoff + the model's headroom %d B (2 x delay x rate + 2 MTU + the TBF's burst), the most %s/%s by %d B: more arrived after the Xoff than the pause's flight allows (the latest change was %v late, the delay line's latest packet %v)",
			len(l.Overruns), l.Headroom, worst.Node, worst.Iface, worst.Over-l.Headroom, l.Lateness.Max, lineMax)
	default:
		hr.Detail = fmt.Sprintf("%d ingress ports above xoff + the file's headroom %d B, the most %s/%s by %d B (counted: a real switch would drop them)",
			len(l.Overruns), l.Headroom, worst.Node, worst.Iface, worst.Over-l.Headroom)
	}
	add(hr)

	t := l.Lateness
	if t.N == 0 {
		add(Check{Name: "pfc apply lateness", Unit: "us", OK: true, Detail: "no pause or resume was applied"})
		return
	}
	d := l.LinkDelay
	b50 := time.Duration(lim.LateShare50*float64(d)) + lim.LateAbs50
	b99 := time.Duration(lim.LateShare99*float64(d)) + lim.LateAbs99
	add(Check{Name: "pfc apply lateness p50", Value: us(t.P50), Limit: us(b50), Unit: "us", OK: t.P50 <= b50,
		Detail: fmt.Sprintf("pauses and resumes in force %v after their due time at the median (bound %v for the %v link), %d changes", t.P50, b50, d, t.N)})
	add(Check{Name: "pfc apply lateness p99", Value: us(t.P99), Limit: us(b99), Unit: "us", OK: t.P99 <= b99,
		Detail: fmt.Sprintf("%v at p99 (bound %v), worst %v", t.P99, b99, t.Max)})
}
