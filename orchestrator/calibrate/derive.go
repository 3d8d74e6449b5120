package calibrate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"cclab/kmod/law"
	"cclab/topology"
)

// A Param is one law parameter the calibration (or the topology) gives,
// and whether the experiment pinned it instead.
type Param struct {
	Law    string `json:"law"`
	Name   string `json:"name"`
	Value  int64  `json:"value"`
	Rule   string `json:"rule"`             // how it was derived
	Pinned string `json:"pinned,omitempty"` // the experiment's value, which wins
}

// Setting is the `cclab cc load` form of p: law.name=value.
func (p Param) Setting() string { return p.Law + "." + p.Name + "=" + strconv.FormatInt(p.Value, 10) }

// Derived are the laws' parameters that come from the measured paths and
// the topology, by the rule of docs/calibration.md:
//
//   - base RTT (PowerTCP's and theta-PowerTCP's tau, HPCC's T, Swift's
//     line-rate start): the largest floor of any class, rounded up to a
//     microsecond. A class's floor is the median echo RTT beside the
//     paced load (the CPU's share of the path included) plus one
//     full-size frame's serialisation at its bottleneck: a packet of a
//     line-rate flow is held there for it even with no queue, while
//     HTB's burst passes it through the other hops. HPCC's T is
//     "slightly above the largest base RTT".
//   - Swift's target: its topology-based scaling through the loaded
//     floors, target(switches) = base_target + switches * per_hop, with
//     per_hop the floors' slope between the shortest and the longest
//     class, and base_target their intercept plus a headroom of a quarter
//     of the base RTT. That is the fast-convergence paper's setting in
//     scaled units: in its 1 us-link fabric a path's RTT grows 2 us per
//     switch (its per_hop) and its 5 us base target sits 3 us above the
//     intercept, a quarter of the 12 us largest base RTT ("our target
//     delay covers the network's serialization and propagation delay").
//     Hops without INT: the longest class.
//   - INT staleness (PowerTCP, HPCC): 20 base RTTs, within [1 ms, 30 ms]
//     (30 ms stays under half the INT timestamp's wrap).
//   - host bandwidth (every law): the hosts' link rate, when all hosts
//     have the same.
//   - Swift's flow-scaling range: half the base RTT, the law's own
//     default ratio (25 us of its 50 us).
//   - the time scale: the base RTT over the papers' base RTT of a path
//     through as many switches (1 us links, 2 us per link both ways: 12
//     us for 5 switches, 4 us for one), the factor by which this fabric
//     stretches the papers' (x 1000 with 1 ms links) whatever its shape.
//   - TIMELY's and DCQCN's time constants (minRTT, T_low, T_high; K, N,
//     T): their papers' values (the HPCC and PowerTCP simulators run them
//     unchanged in 1 us-link fabrics), times the time scale. Their rate
//     steps are fractions of the host rate (the laws' defaults) and
//     DCQCN's byte counter stays in bytes (BDPs match).
//   - Variable AI's congestion per token, the fast-convergence paper's
//     values (100 Gbit/s hosts, 1 us links) carried over by the scaling
//     rule (docs/scaling.md): Swift's 30 ns of queueing delay per token
//     times the time scale, HPCC's 1 KB of queue per token times this
//     BDP over the paper's BDP of the same path.
//   - Swift's additive increase: the fast-convergence paper's 50 Mbit/s
//     per RTT at 100 Gbit/s ("like HPCC", whose W_AI it is), a rate
//     scaled by the rate scale, over a base RTT: host_bw / 100 Gbit/s x
//     50 Mbit/s x base RTT in bytes, the BDP / 2000 (HPCC's own W_AI at
//     its defaults, W_init x (1 - eta) / N), rounded, at least 1 byte.
//     Not set when hosts differ in rate (the law's MSS per RTT stands).
type Derived struct {
	BaseRTTNs int64 `json:"base_rtt_ns"`
	// PaperRTTNs is the papers' base RTT of the longest class's path, the
	// reference of TimeScale = BaseRTTNs / PaperRTTNs.
	PaperRTTNs        int64   `json:"paper_rtt_ns"`
	TimeScale         float64 `json:"time_scale"`
	SwiftBaseTargetNs int64   `json:"swift_base_target_ns"`
	SwiftPerHopNs     int64   `json:"swift_per_hop_ns"`
	SwiftHops         int     `json:"swift_hops"`
	IntMaxAgeNs       int64   `json:"int_max_age_ns"`
	HostBwMbps        int64   `json:"host_bw_mbps,omitempty"`
	SwiftFsRangeNs    int64   `json:"swift_fs_range_ns"`
	SwiftVaiAiDivNs   int64   `json:"swift_vai_ai_div_ns"`
	HpccVaiAiDivBytes int64   `json:"hpcc_vai_ai_div_bytes,omitempty"`
	SwiftAiBytes      int64   `json:"swift_ai_bytes,omitempty"`
	Params            []Param `json:"params"` // per law, with what the experiment pinned
}

// maxLawTimeNs is the largest time constant the laws accept (law_table.h).
const maxLawTimeNs = int64(time.Second)

// swiftHeadroomDiv: Swift's base target sits a quarter of the base RTT
// above the classes' floors' intercept.
const swiftHeadroomDiv = 4

// The fast-convergence paper's fabric and Variable AI settings, which
// the scaling rule carries over.
const (
	paperLinkDelayNs   = 1000    // every link: 12 us base RTT through 5 switches
	paperHostBps       = 100e9   // host links
	paperSwiftAiDivNs  = 30      // Swift: 30 ns of queueing per token
	paperHpccAiDivByte = 1 << 10 // HPCC: 1 KB of queue per token
	paperAiBps         = 50e6    // Swift, "like HPCC": additive increase 50 Mbit/s
)

// lawParamNames lists a law's parameters (law_table.h), nil for a name
// that is no law of the table (a kernel congestion control). The rule
// derives, for every law, each of these it has a value for: a law with
// int_max_age_ns gets the calibrated one, whichever law it is. QCN's and
// QCN-T's cycles (150 KB, 15 ms; QCN-T's 2.4 ms) are not RTT-bound: the
// rule has no value for them, only for the line rate they start from.
func lawParamNames(name string) []string {
	l, err := law.ParseLaw(name)
	if err != nil {
		return nil
	}
	p, err := law.DefaultParams(l)
	if err != nil {
		return nil
	}
	var out []string
	for _, v := range p.List() {
		out = append(out, v.Name)
	}
	return out
}

// paperRTTNs is the papers' base RTT of a path through switches switches.
func paperRTTNs(switches int) int64 { return 2 * int64(switches+1) * paperLinkDelayNs }

// The TIMELY and DCQCN papers' time constants (ns), times the time scale,
// within the laws' range (maxLawTimeNs: T_high reaches it at x 2000).
var paperTimeNs = map[string]map[string]int64{
	"timely": {"min_rtt_ns": 20000, "t_low_ns": 50000, "t_high_ns": 500000},
	"dcqcn":  {"alpha_ns": 55000, "cnp_ns": 50000, "timer_ns": 55000},
}

// Derive applies the rule to a calibration of plan. pinned holds the
// experiment's law settings; a pinned parameter keeps the experiment's
// value and is recorded as such. laws are the laws being registered.
func Derive(r *Result, plan *topology.Plan, laws []string, pinned law.Settings) (*Derived, error) {
	if len(r.Classes) == 0 {
		return nil, fmt.Errorf("derive: no path classes measured")
	}
	d := &Derived{}
	lo, hi := r.Classes[0], r.Classes[0]
	for _, c := range r.Classes {
		d.BaseRTTNs = max(d.BaseRTTNs, c.Floor())
		if c.Switches < lo.Switches {
			lo = c
		}
		if c.Switches > hi.Switches {
			hi = c
		}
	}
	d.BaseRTTNs = roundUpUs(d.BaseRTTNs)
	if hi.Switches > lo.Switches {
		d.SwiftPerHopNs = max(0, (hi.Floor()-lo.Floor())/int64(hi.Switches-lo.Switches))
	}
	d.SwiftBaseTargetNs = max(int64(time.Microsecond), roundUpUs(lo.Floor()-int64(lo.Switches)*d.SwiftPerHopNs+d.BaseRTTNs/swiftHeadroomDiv))
	d.SwiftHops = hi.Switches
	d.IntMaxAgeNs = min(max(20*d.BaseRTTNs, int64(time.Millisecond)), int64(30*time.Millisecond))
	d.HostBwMbps = hostMbps(plan)
	d.SwiftFsRangeNs = d.BaseRTTNs / 2
	d.PaperRTTNs = paperRTTNs(hi.Switches)
	d.TimeScale = float64(d.BaseRTTNs) / float64(d.PaperRTTNs)
	d.SwiftVaiAiDivNs = max(1, d.BaseRTTNs*paperSwiftAiDivNs/d.PaperRTTNs)
	if d.HostBwMbps > 0 {
		// bytes = 1 KB * (host_bw * base_rtt) / (100 Gbit/s * paper RTT)
		bdp := float64(d.HostBwMbps) * 1e6 / 8 * float64(d.BaseRTTNs) / 1e9
		d.HpccVaiAiDivBytes = max(1, int64(paperHpccAiDivByte*bdp/(paperHostBps/8*float64(d.PaperRTTNs)/1e9)))
		// bytes per RTT = 50 Mbit/s * host_bw / 100 Gbit/s * base_rtt / 8
		d.SwiftAiBytes = max(1, int64(math.Round(bdp*paperAiBps/paperHostBps)))
	}

	values := map[string]struct {
		v    int64
		rule string
	}{
		"base_rtt_ns":    {d.BaseRTTNs, "largest path-class floor: loaded echo median + one MTU frame at the bottleneck"},
		"int_max_age_ns": {d.IntMaxAgeNs, "20 base RTTs within [1 ms, 30 ms]"},
		"base_target_ns": {d.SwiftBaseTargetNs, "intercept of the classes' floors against switches + base RTT / 4"},
		"per_hop_ns":     {d.SwiftPerHopNs, "slope of the classes' floors against switches"},
		"hops":           {int64(d.SwiftHops), "switches of the longest class"},
		"host_bw_mbps":   {d.HostBwMbps, "the hosts' link rate (topology)"},
		"fs_range_ns":    {d.SwiftFsRangeNs, "base RTT / 2 (the law's default ratio)"},
		"ai_bytes":       {d.SwiftAiBytes, "50 Mbit/s per RTT (paper, as HPCC's W_AI) x host_bw / 100 Gbit/s x base RTT / 8: BDP / 2000, rounded, at least 1"},
	}
	perLaw := map[string]map[string]struct {
		v    int64
		rule string
	}{
		"swift": {"vai_ai_div": {d.SwiftVaiAiDivNs, fmt.Sprintf("30 ns per token (paper) x base RTT / %d us (the papers' RTT of the path)", d.PaperRTTNs/1000)}},
		"hpcc":  {"vai_ai_div": {d.HpccVaiAiDivBytes, fmt.Sprintf("1 KB per token (paper) x BDP / the paper's BDP of the path (100 Gbit/s x %d us)", d.PaperRTTNs/1000)}},
	}
	for lawName, consts := range paperTimeNs {
		if perLaw[lawName] == nil {
			perLaw[lawName] = map[string]struct {
				v    int64
				rule string
			}{}
		}
		for name, ns := range consts {
			perLaw[lawName][name] = struct {
				v    int64
				rule string
			}{min(roundUpUs(ns*d.BaseRTTNs/d.PaperRTTNs), maxLawTimeNs), fmt.Sprintf("%d us (paper) x base RTT / %d us (the papers' RTT of the path), at most 1 s", ns/1000, d.PaperRTTNs/1000)}
		}
	}
	for _, lawName := range laws {
		id, err := law.ParseLaw(lawName)
		if err != nil {
			continue // a congestion control of the kernel's: nothing to derive
		}
		for _, name := range lawParamNames(lawName) {
			v, ok := perLaw[lawName][name] // the same name in another law's units
			if !ok {
				if v, ok = values[name]; !ok {
					continue // not derived: the law's default or the experiment's value stands
				}
			}
			if v.v == 0 && (name == "host_bw_mbps" || name == "vai_ai_div" || name == "ai_bytes") {
				continue // hosts at different rates: the law's default stands
			}
			p := Param{Law: lawName, Name: name, Value: v.v, Rule: v.rule}
			if pv, ok := pinned.Get(id, name); ok {
				p.Pinned = strconv.FormatUint(pv, 10)
			}
			d.Params = append(d.Params, p)
		}
	}
	return d, nil
}

// Floor is the class's base RTT as the laws see it: the loaded echo
// floor plus one full-size frame's serialisation at the bottleneck, the
// RTT of a line-rate flow's packet through empty queues.
func (c Class) Floor() int64 { return c.FloorNs + c.MTUSerialiseNs }

// Settings are the derived parameters that are not pinned, as `cclab cc
// load` settings, sorted.
func (d *Derived) Settings() []string {
	var out []string
	for _, p := range d.Params {
		if p.Pinned == "" {
			out = append(out, p.Setting())
		}
	}
	slices.Sort(out)
	return out
}

func roundUpUs(ns int64) int64 {
	us := int64(time.Microsecond)
	return (ns + us - 1) / us * us
}

// hostMbps is the rate of the hosts' links in whole Mbit/s, or 0 when
// hosts differ.
func hostMbps(plan *topology.Plan) int64 {
	var rate int64
	for _, h := range plan.Hosts() {
		_, l, ok := plan.HostPort(h.Name)
		if !ok {
			continue
		}
		r := int64(l.Rate) / 1e6
		if rate != 0 && r != rate {
			return 0
		}
		rate = r
	}
	return rate
}
