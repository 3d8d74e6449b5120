package report

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// The numbers a measure gives (measures.go): one number per metric for
// a variant, and per-flow numbers that a claim pools over runs.

// Metric names a measured number and how to print it.
type Metric struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	Unit  string `json:"unit"` // "ms", "KB", "%", "x" (slowdown), "base RTTs" or "" (plain)
}

// Format prints x in the metric's unit: ns as ms, bytes as KB, shares
// as percent; "-" for not measured, "never" for +Inf.
func (m Metric) Format(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	if math.IsInf(x, 1) {
		return "never"
	}
	switch m.Unit {
	case "ms":
		return strconv.FormatFloat(x/1e6, 'f', 2, 64)
	case "KB":
		return strconv.FormatFloat(x/1e3, 'f', 1, 64)
	case "%":
		return strconv.FormatFloat(100*x, 'f', 0, 64)
	case "":
		if x == math.Trunc(x) {
			return strconv.FormatFloat(x, 'f', 0, 64)
		}
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// Heading is the metric's label with its unit, as a table heads it.
func (m Metric) Heading() string {
	if m.Unit == "" || m.Unit == "x" {
		return m.Label
	}
	return m.Label + " (" + m.Unit + ")"
}

// Metrics are one variant's measured numbers by name; NaN when the run
// did not give what the metric needs.
type Metrics map[string]float64

// Get returns the metric, NaN when absent.
func (m Metrics) Get(name string) float64 {
	if v, ok := m[name]; ok {
		return v
	}
	return math.NaN()
}

var nan = math.NaN()

// MarshalJSON leaves out the metrics that could not be measured (JSON has
// no NaN; Get gives NaN for them again) and writes "never" for +Inf (a
// queue that never drained).
func (m Metrics) MarshalJSON() ([]byte, error) {
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch {
		case math.IsInf(v, 1):
			out[k] = "never"
		case !math.IsNaN(v) && !math.IsInf(v, 0):
			out[k] = v
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (m *Metrics) UnmarshalJSON(b []byte) error {
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*m = Metrics{}
	for k, v := range raw {
		switch x := v.(type) {
		case float64:
			(*m)[k] = x
		case string:
			if x != "never" {
				return fmt.Errorf("metric %s: %q is not a number", k, x)
			}
			(*m)[k] = math.Inf(1)
		}
	}
	return nil
}

// Samples are one variant's per-flow numbers by metric: what a pooled
// percentile is taken over and what pairs two laws' flows in a ratio.
type Samples map[string][]Sample

// A Sample is one flow's number: +Inf when the flow did not complete (a
// censored time: it took longer than the run).
type Sample struct {
	Flow string  // the workload's flow id, the same in every variant of a seed
	V    float64 // in the metric's unit
}

// MarshalJSON writes a sample as [flow, value], "never" for +Inf, to keep
// the store small (thousands per variant).
func (s Sample) MarshalJSON() ([]byte, error) {
	var v any = s.V
	switch {
	case math.IsInf(s.V, 1):
		v = "never"
	case math.IsNaN(s.V) || math.IsInf(s.V, -1):
		v = nil
	}
	return json.Marshal([]any{s.Flow, v})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (s *Sample) UnmarshalJSON(b []byte) error {
	var raw []any
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if len(raw) != 2 {
		return fmt.Errorf("sample %s: want [flow, value]", b)
	}
	id, ok := raw[0].(string)
	if !ok {
		return fmt.Errorf("sample %s: flow is not a string", b)
	}
	s.Flow = id
	switch x := raw[1].(type) {
	case float64:
		s.V = x
	case nil:
		s.V = math.NaN()
	case string:
		if x != "never" {
			return fmt.Errorf("sample %s: %q is not a number", b, x)
		}
		s.V = math.Inf(1)
	default:
		return fmt.Errorf("sample %s: value is not a number", b)
	}
	return nil
}
