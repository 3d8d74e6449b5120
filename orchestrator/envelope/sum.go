package envelope

import "slices"

// A Sum is one value's runs together: how many were faithful, and the
// worst of their variants on each CPU check.
type Sum struct {
	Value       float64 `json:"value"`
	Runs        int     `json:"runs"`
	Faithful    int     `json:"faithful_runs"`
	Saturated   float64 `json:"max_saturated_share"`
	CPUQueueP99 float64 `json:"max_cpu_queue_p99_us"`
	CPUQueueMed float64 `json:"median_cpu_queue_p99_us"`
	LateP99     float64 `json:"max_line_late_p99_us"`
	Softirq     float64 `json:"mean_packet_softirq_share"`
	// Bounds of the checks (the runs' own; the same for every run of a
	// topology).
	SaturatedBound float64 `json:"saturated_bound"`
	CPUQueueBound  float64 `json:"cpu_queue_p99_bound_us"`
}

// finish sums the runs per value and finds the edge.
func (e *Envelope) finish() *Envelope {
	e.Sums = nil
	var order []float64
	by := map[float64][]Run{}
	for _, r := range e.Runs {
		if by[r.Value] == nil {
			order = append(order, r.Value)
		}
		by[r.Value] = append(by[r.Value], r)
	}
	e.HasEdge = false
	for _, v := range order {
		s := Sum{Value: v}
		var qs []float64
		n := 0
		for _, r := range by[v] {
			s.Runs++
			if r.Faithful() {
				s.Faithful++
			}
			for _, x := range r.Variants {
				s.Saturated = max(s.Saturated, x.Saturated)
				s.CPUQueueP99 = max(s.CPUQueueP99, x.CPUQueueP99)
				s.LateP99 = max(s.LateP99, x.LateP99)
				s.Softirq += x.PacketSoftirq
				s.SaturatedBound = max(s.SaturatedBound, x.SaturatedBound)
				s.CPUQueueBound = max(s.CPUQueueBound, x.CPUQueueBound)
				qs = append(qs, x.CPUQueueP99)
				n++
			}
		}
		if n > 0 {
			s.Softirq /= float64(n)
			slices.Sort(qs)
			s.CPUQueueMed = qs[len(qs)/2]
		}
		e.Sums = append(e.Sums, s)
	}
	for _, s := range e.Sums {
		if s.Faithful < s.Runs {
			break
		}
		e.Edge, e.HasEdge = s.Value, true
	}
	return e
}
