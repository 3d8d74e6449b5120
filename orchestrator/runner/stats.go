package runner

import (
	"math"
	"slices"
	"sort"

	"cclab/rundir"
)

func sortStrings(s []string) []string { sort.Strings(s); return s }

// percentile of sorted values (nearest rank).
func percentile[T int64 | float64](sorted []T, p float64) T {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// Summary is one variant's outcome, one line of the comparison table.
type Summary struct {
	CC             string  `json:"cc"`
	Dir            string  `json:"dir"`
	Flows          int     `json:"flows"`
	OK             int     `json:"ok"`
	Failed         int     `json:"failed"`
	MedianFCTNs    int64   `json:"median_fct_ns"`
	P99FCTNs       int64   `json:"p99_fct_ns"`
	MedianSlowdown float64 `json:"median_slowdown"`
	P99Slowdown    float64 `json:"p99_slowdown"`
	// GoodputBps is the payload delivered by completed flows over the span
	// from the first start to the last end.
	GoodputBps   uint64  `json:"goodput_bps"`
	CaptureDrops uint64  `json:"capture_drops"`
	CPUSaturated float64 `json:"cpu_saturated_share"`
	RTTMedianNs  int64   `json:"rtt_floor_median_ns"`
	// Fidelity is the verdict on the emulation: faithful or degraded, and
	// why (docs/fidelity.md).
	Fidelity        string   `json:"fidelity"`
	FidelityReasons []string `json:"fidelity_reasons,omitempty"`
	// Groups breaks FCTs down by workload entry.
	Groups []GroupSummary `json:"groups"`
}

// GroupSummary is the FCT of one workload entry's flows.
type GroupSummary struct {
	Group       string  `json:"group"`
	OK          int     `json:"ok"`
	Failed      int     `json:"failed"`
	MedianFCTNs int64   `json:"median_fct_ns"`
	P99FCTNs    int64   `json:"p99_fct_ns"`
	P99Slowdown float64 `json:"p99_slowdown"`
}

func summarise(cc, dir string, rows []rundir.Flow) Summary {
	s := Summary{CC: cc, Dir: dir, Flows: len(rows)}
	var fcts []int64
	var slows []float64
	var first, last int64 = math.MaxInt64, 0
	var bytes uint64
	groups := map[string]*struct {
		g     GroupSummary
		fcts  []int64
		slows []float64
	}{}
	var order []string
	for _, r := range rows {
		g := groups[r.Group]
		if g == nil {
			g = &struct {
				g     GroupSummary
				fcts  []int64
				slows []float64
			}{g: GroupSummary{Group: r.Group}}
			groups[r.Group] = g
			order = append(order, r.Group)
		}
		if !r.OK() {
			s.Failed++
			g.g.Failed++
			continue
		}
		s.OK++
		g.g.OK++
		fct := r.EndNs - r.StartNs
		sl := 1.0
		if r.IdealFCTNs > 0 {
			sl = max(1, float64(fct)/float64(r.IdealFCTNs))
		}
		fcts, slows = append(fcts, fct), append(slows, sl)
		g.fcts, g.slows = append(g.fcts, fct), append(g.slows, sl)
		first, last = min(first, r.StartNs), max(last, r.EndNs)
		bytes += r.Size
	}
	slices.Sort(fcts)
	slices.Sort(slows)
	s.MedianFCTNs, s.P99FCTNs = percentile(fcts, 50), percentile(fcts, 99)
	s.MedianSlowdown, s.P99Slowdown = percentile(slows, 50), percentile(slows, 99)
	if last > first {
		s.GoodputBps = uint64(float64(bytes) * 8 / (float64(last-first) / 1e9))
	}
	for _, name := range order {
		g := groups[name]
		slices.Sort(g.fcts)
		slices.Sort(g.slows)
		g.g.MedianFCTNs, g.g.P99FCTNs = percentile(g.fcts, 50), percentile(g.fcts, 99)
		g.g.P99Slowdown = percentile(g.slows, 99)
		s.Groups = append(s.Groups, g.g)
	}
	return s
}
