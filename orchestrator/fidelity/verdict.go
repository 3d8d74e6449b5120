// Package fidelity judges whether a run's emulation held the invariants a
// number from it depends on (docs/fidelity.md): links no faster than
// configured, delays as configured, the CPUs not saturated, the path's RTT
// under load close to what was configured and to what the laws were
// given, and no loss outside the configured buffers. Every run gets a
// verdict: faithful, or degraded with each broken invariant and by how
// much.
package fidelity

import (
	"fmt"
	"strings"
	"time"

	"cclab/orchestrator/calibrate"
	"cclab/orchestrator/cpuqueue"
	"cclab/orchestrator/delay/line"
	"cclab/orchestrator/health"
	"cclab/orchestrator/netbuild"
)

// The verdicts.
const (
	Faithful = "faithful"
	Degraded = "degraded"
	// Interrupted: a signal ended the run before its workload did; its
	// numbers are not results whatever the invariants said.
	Interrupted = "interrupted"
)

// Limits are the invariants' bounds (docs/fidelity.md gives the reasons).
type Limits struct {
	// LinkRate: no loaded link's busiest window above this many times
	// its configured rate (2 % for the windows' timing, which the sampler
	// knows to 2 %, and 1 % to spare), plus what LinkBurst bytes add to a
	// window at that rate: HTB lets a class send its burst and one packet
	// beyond its tokens, a tenth of a 100 ms window at 100 Mbit/s.
	LinkRate  float64 `json:"link_rate_ratio"`
	LinkBurst int64   `json:"link_burst_bytes"`
	// Delay line lateness: p50 within LateShare50 of the smallest delay
	// plus LateAbs50, p99 within LateShare99 plus LateAbs99 (the delay
	// line's accuracy bar).
	LateShare50 float64       `json:"late_share_p50"`
	LateAbs50   time.Duration `json:"late_abs_p50_ns"`
	LateShare99 float64       `json:"late_share_p99"`
	LateAbs99   time.Duration `json:"late_abs_p99_ns"`
	// Saturated: the share of sampling windows with the packet CPUs
	// saturated. Where the CPU queue probe ran, the queue's delay is
	// judged directly and saturation decides only above
	// SaturatedWithProbe: then the CPU capped the run's rates for a
	// quarter of it, which no queue shows.
	Saturated          float64 `json:"saturated_share"`
	SaturatedWithProbe float64 `json:"saturated_share_with_probe"`
	// UserSaturated: the share of windows in which the CPUs the runner's
	// threads were confined to (emulation.user_cpu) were saturated; above
	// it the workload's senders could not offer their load for that
	// share of the run, which no queue shows (as SaturatedWithProbe).
	UserSaturated float64 `json:"user_saturated_share"`
	// CPU queue delay of the longest path per round trip: p50 within
	// CPUShare50 of its RTT plus CPUAbs50, p99 within CPUShare99 plus
	// CPUAbs99 (the delay line's accuracy bar: the CPU queue is an error
	// in the path's delay like the line's lateness).
	CPUShare50 float64       `json:"cpu_queue_share_p50"`
	CPUAbs50   time.Duration `json:"cpu_queue_abs_p50_ns"`
	CPUShare99 float64       `json:"cpu_queue_share_p99"`
	CPUAbs99   time.Duration `json:"cpu_queue_abs_p99_ns"`
	// RTTInflation: the loaded RTT floor at most this much above the
	// configured propagation RTT, relative (the CPU's share of the path).
	RTTInflation float64 `json:"rtt_inflation"`
	// RTTDrift: this variant's loaded floor within this share (plus
	// RTTDriftAbs) of the floor the laws' parameters came from.
	RTTDrift    float64       `json:"rtt_drift"`
	RTTDriftAbs time.Duration `json:"rtt_drift_abs_ns"`
	// Stolen: the share of all CPU time the hypervisor may take from the
	// run's CPUs. Above it the machine was not the run's own: a stolen
	// millisecond stops every packet, timer and delay line at once.
	Stolen float64 `json:"stolen_share"`
}

// DefaultLimits are cclab's bounds.
func DefaultLimits() Limits {
	return Limits{
		LinkRate:    1.03,
		LinkBurst:   netbuild.HTBBurst + 64<<10, // and one GSO packet
		LateShare50: 0.05, LateAbs50: 10 * time.Microsecond,
		LateShare99: 0.15, LateAbs99: 100 * time.Microsecond,
		Saturated: 0.05, SaturatedWithProbe: 0.25, UserSaturated: 0.25,
		CPUShare50: 0.05, CPUAbs50: 10 * time.Microsecond,
		CPUShare99: 0.15, CPUAbs99: 100 * time.Microsecond,
		RTTInflation: 0.25,
		RTTDrift:     0.10, RTTDriftAbs: 20 * time.Microsecond,
		Stolen: 0.01,
	}
}

// Inputs are what a run measured about its emulation.
type Inputs struct {
	Health health.Report
	// Engine holds the delay: "netem", "line", or "" (no delay).
	Engine string
	// Line is the delay line's report (engine line), with the smallest
	// delay it applied.
	Line     *line.Stats
	MinDelay time.Duration
	// Calibration is this variant's, Base the one the laws' parameters
	// came from (nil: none was made).
	Calibration *calibrate.Result
	Base        *calibrate.Result
	// CPUQueue is the CPU queue probe's report (nil: none ran); Path
	// the fabric's longest path, which it is judged against.
	CPUQueue *cpuqueue.Report
	Path     Path
	// Lossless is a lossless run's pauses and drops (nil: lossy).
	Lossless *Lossless
}

// Path is a path by its switch count and round-trip time.
type Path struct {
	Switches int   `json:"switches"`
	RTTNs    int64 `json:"rtt_ns"`
}

// A Check is one invariant: what was measured, its bound, and whether it
// held. Value and Limit are in Unit.
type Check struct {
	Name   string  `json:"name"`
	OK     bool    `json:"ok"`
	Value  float64 `json:"value"`
	Limit  float64 `json:"limit"`
	Unit   string  `json:"unit"`
	Detail string  `json:"detail"`
}

// Verdict is the judgement of one run.
type Verdict struct {
	Verdict string   `json:"verdict"`
	Limits  Limits   `json:"limits"`
	Checks  []Check  `json:"checks"`
	Reasons []string `json:"reasons,omitempty"` // the broken invariants, one line each
}

// Faithful reports whether every invariant held.
func (v Verdict) Faithful() bool { return v.Verdict == Faithful }

// String is the verdict in one line: "faithful", or "degraded: " (or
// "interrupted: ") and the reasons.
func (v Verdict) String() string {
	if v.Faithful() {
		return Faithful
	}
	if v.Verdict == Interrupted {
		return Interrupted + ": " + strings.Join(v.Reasons, "; ")
	}
	return Degraded + ": " + strings.Join(v.Reasons, "; ")
}

// Interrupt marks the verdict interrupted, why heading the reasons.
func (v *Verdict) Interrupt(why string) {
	v.Verdict = Interrupted
	v.Reasons = append([]string{why}, v.Reasons...)
}

// Judge checks every invariant the inputs allow.
func Judge(in Inputs, lim Limits) Verdict {
	v := Verdict{Limits: lim}
	add := func(c Check) {
		v.Checks = append(v.Checks, c)
		if !c.OK {
			v.Reasons = append(v.Reasons, c.Name+": "+c.Detail)
		}
	}
	linkRate(in, lim, add)
	lineLateness(in, lim, add)
	cpu(in, lim, add)
	rttFloor(in, lim, add)
	drops(in, add)
	lossless(in, lim, add)
	v.Verdict = Faithful
	if len(v.Reasons) > 0 {
		v.Verdict = Degraded
	}
	return v
}

func linkRate(in Inputs, lim Limits, add func(Check)) {
	window := time.Duration(in.Health.Interval)
	bound := func(l health.LinkRate) float64 {
		if l.ConfigBps == 0 || window <= 0 {
			return lim.LinkRate
		}
		return lim.LinkRate + float64(lim.LinkBurst*8)/(float64(l.ConfigBps)*window.Seconds())
	}
	// The link furthest above its own bound.
	var worst health.LinkRate
	over := -1e9
	for _, l := range in.Health.Links {
		if o := l.Ratio - bound(l); o > over {
			worst, over = l, o
		}
	}
	c := Check{Name: "link rate", Value: worst.Ratio, Limit: bound(worst), Unit: "x configured", OK: worst.Ratio <= bound(worst)}
	if worst.Node == "" {
		c.Detail = "no link reached half its rate"
	} else {
		c.Detail = fmt.Sprintf("busiest against its bound: %s/%s at %.3f x its %s in a %v window (bound %.3f with HTB's burst)",
			worst.Node, worst.Iface, worst.Ratio, mbps(worst.ConfigBps), window, bound(worst))
	}
	add(c)
}

func lineLateness(in Inputs, lim Limits, add func(Check)) {
	if in.Engine != "line" || in.Line == nil {
		return
	}
	st := in.Line
	d := in.MinDelay
	p50, p99 := st.Late.Quantile(0.50), st.Late.Quantile(0.99)
	b50 := time.Duration(lim.LateShare50*float64(d)) + lim.LateAbs50
	b99 := time.Duration(lim.LateShare99*float64(d)) + lim.LateAbs99
	add(Check{Name: "delay line p50 lateness", Value: us(p50), Limit: us(b50), Unit: "us", OK: p50 <= b50,
		Detail: fmt.Sprintf("%v late at the median (bound %v for the smallest delay %v), %d packets", p50, b50, d, st.Late.Total)})
	add(Check{Name: "delay line p99 lateness", Value: us(p99), Limit: us(b99), Unit: "us", OK: p99 <= b99,
		Detail: fmt.Sprintf("%v late at p99 (bound %v), worst %v", p99, b99, st.MaxLate)})
}

func cpu(in Inputs, lim Limits, add func(Check)) {
	c := in.Health.CPU
	limit := lim.Saturated
	if in.CPUQueue != nil {
		limit = lim.SaturatedWithProbe
	}
	add(Check{Name: "CPU saturation", Value: c.SaturatedShare, Limit: limit, Unit: "share of windows", OK: c.SaturatedShare <= limit,
		Detail: fmt.Sprintf("packet processing saturated %.0f%% of %d windows (packet CPUs %v: softirq %.0f%%, busiest window %.0f%%, busy with anything in %.0f%% of windows; backlog median %d, max %d packets)",
			100*c.SaturatedShare, c.Windows, c.PacketCPUs, 100*c.PacketSoftirq, 100*c.MaxPacketSoftirq, 100*c.BusyShare, c.BacklogMedian, c.BacklogMax)})
	if len(c.UserCPUs) > 0 {
		add(Check{Name: "CPU saturation of the runner", Value: c.UserSaturatedShare, Limit: lim.UserSaturated, Unit: "share of windows",
			OK:     c.UserSaturatedShare <= lim.UserSaturated,
			Detail: fmt.Sprintf("the runner's CPUs %v (the workload's senders and receivers, the samplers, the delay line) were at least 95%% busy in %.0f%% of %d windows", c.UserCPUs, 100*c.UserSaturatedShare, c.Windows)})
	}
	add(Check{Name: "CPU stolen", Value: c.Stolen, Limit: lim.Stolen, Unit: "share of CPU time", OK: c.Stolen <= lim.Stolen,
		Detail: fmt.Sprintf("the hypervisor took %.2f%% of the CPUs' time (one CPU's worst window %.0f%%)", 100*c.Stolen, 100*c.MaxStolenOneCPU)})
	cpuQueue(in, lim, add)
	sn := in.Health.Softnet
	add(Check{Name: "CPU backlog", Value: float64(sn.Dropped), Limit: 0, Unit: "packets dropped", OK: sn.Dropped == 0,
		Detail: fmt.Sprintf("%d packets dropped by full CPU backlogs, %d softirq runs cut short", sn.Dropped, sn.TimeSqueeze)})
}

// cpuQueue judges the CPU queue the probe measured on a chain as long as
// the longest path against that path's RTT.
func cpuQueue(in Inputs, lim Limits, add func(Check)) {
	q := in.CPUQueue
	if q == nil {
		return
	}
	p50, p99 := time.Duration(q.QueueP50Ns), time.Duration(q.QueueP99Ns)
	rtt := time.Duration(in.Path.RTTNs)
	b50 := time.Duration(lim.CPUShare50*float64(rtt)) + lim.CPUAbs50
	b99 := time.Duration(lim.CPUShare99*float64(rtt)) + lim.CPUAbs99
	add(Check{Name: "CPU queue p50", Value: us(p50), Limit: us(b50), Unit: "us per RTT", OK: p50 <= b50,
		Detail: fmt.Sprintf("%v per round trip of a %d-link chain at the median, bound %v (the %d-switch path's RTT %v); %d echoes, idle %v",
			p50, q.Links, b50, in.Path.Switches, rtt, q.Loaded.Samples, time.Duration(q.Idle.P50Ns))})
	add(Check{Name: "CPU queue p99", Value: us(p99), Limit: us(b99), Unit: "us per RTT", OK: p99 <= b99,
		Detail: fmt.Sprintf("%v per round trip at p99, bound %v", p99, b99)})
}

func rttFloor(in Inputs, lim Limits, add func(Check)) {
	if in.Calibration == nil || len(in.Calibration.Classes) == 0 {
		return
	}
	// The class the CPU inflates most.
	var worst calibrate.Class
	worstInfl := -1.0
	for _, c := range in.Calibration.Classes {
		infl := inflation(c)
		if infl > worstInfl {
			worst, worstInfl = c, infl
		}
	}
	ck := Check{Name: "RTT floor vs configured", Value: worstInfl, Limit: lim.RTTInflation, Unit: "relative excess", OK: worstInfl <= lim.RTTInflation}
	if worst.ConfiguredNs == 0 {
		ck.Detail = fmt.Sprintf("%d-switch paths: no propagation delay configured; the loaded RTT (%v) is all CPU, so every time constant of a law is CPU noise",
			worst.Switches, time.Duration(worst.FloorNs))
	} else {
		ck.Detail = fmt.Sprintf("%d-switch paths: loaded floor %v against %v configured (+%.0f%%)",
			worst.Switches, time.Duration(worst.FloorNs), time.Duration(worst.ConfiguredNs), 100*worstInfl)
	}
	add(ck)
	if in.Base == nil || in.Base == in.Calibration {
		return
	}
	for _, c := range in.Calibration.Classes {
		for _, b := range in.Base.Classes {
			if b.Switches != c.Switches {
				continue
			}
			diff := time.Duration(abs(c.FloorNs - b.FloorNs))
			bound := time.Duration(lim.RTTDrift*float64(b.FloorNs)) + lim.RTTDriftAbs
			if diff > bound {
				add(Check{Name: "RTT floor vs the laws' calibration", Value: us(diff), Limit: us(bound), Unit: "us", OK: false,
					Detail: fmt.Sprintf("%d-switch paths: loaded floor %v here, %v where the laws' parameters were derived",
						c.Switches, time.Duration(c.FloorNs), time.Duration(b.FloorNs))})
				return
			}
		}
	}
	add(Check{Name: "RTT floor vs the laws' calibration", OK: true, Unit: "us", Limit: us(time.Duration(lim.RTTDrift*float64(in.Base.Classes[0].FloorNs)) + lim.RTTDriftAbs),
		Detail: "every class within bound of the calibration the laws' parameters came from"})
}

// inflation is how much a class's loaded floor exceeds its configured RTT,
// relative to it; with nothing configured, any RTT is all excess.
func inflation(c calibrate.Class) float64 {
	if c.ConfiguredNs <= 0 {
		if c.FloorNs > 0 {
			return float64(c.FloorNs) / float64(time.Microsecond) // effectively unbounded
		}
		return 0
	}
	return float64(c.FloorNs-c.ConfiguredNs) / float64(c.ConfiguredNs)
}

func drops(in Inputs, add func(Check)) {
	var n uint64
	var where []string
	for _, d := range in.Health.Drops {
		n += d.Drops
		if len(where) < 4 {
			where = append(where, fmt.Sprintf("%s/%s %d", d.Netns, d.Iface, d.Drops))
		}
	}
	if in.Line != nil {
		t := in.Line.Totals()
		if lost := t.BufferDrops + t.SendErrors; lost > 0 {
			n += lost
			where = append(where, fmt.Sprintf("delay line %d (buffer %d, send errors %d)", lost, t.BufferDrops, t.SendErrors))
		}
	}
	detail := "none"
	if n > 0 {
		detail = fmt.Sprintf("%d packets lost outside the configured buffers: %s", n, strings.Join(where, ", "))
	}
	add(Check{Name: "stray drops", Value: float64(n), Limit: 0, Unit: "packets", OK: n == 0, Detail: detail})
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func mbps(bps uint64) string { return fmt.Sprintf("%.0f Mbit/s", float64(bps)/1e6) }

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
