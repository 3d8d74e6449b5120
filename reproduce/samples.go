package reproduce

import (
	"encoding/json"
	"fmt"
	"math"
)

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

// values are the samples' numbers.
func values(ss []Sample) []float64 {
	out := make([]float64, len(ss))
	for i, s := range ss {
		out[i] = s.V
	}
	return out
}
