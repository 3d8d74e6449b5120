package report

import (
	"fmt"
	"math"

	"gopkg.in/yaml.v3"

	"cclab/topology"
)

// Measured is what one measure (measures.go) gave for one variant's run:
// the numbers the reproduction suite's claims judge, in summary.json's
// "measures".
type Measured struct {
	Variant string  `json:"variant"`
	Measure string  `json:"measure"`
	Group   string  `json:"group,omitempty"` // the workload entry it looked at
	Metrics Metrics `json:"metrics"`
	// Samples are the per-flow numbers (Measure.FlowMetrics), pooled by
	// the suite over runs; too many for summary.json.
	Samples Samples `json:"-"`
	// RateBps is the bottleneck's rate the metrics were taken against.
	RateBps float64 `json:"rate_bps"`
}

// NewMeasureView is a's view for the measures, against the bottleneck
// rate rateBps.
func NewMeasureView(a *Analysis, rateBps float64) MeasureView {
	return MeasureView{a: a, rateBps: rateBps}
}

// RateBps is the bottleneck's rate.
func (v MeasureView) RateBps() float64 { return v.rateBps }

// Analysis is the analysis the view reads.
func (v MeasureView) Analysis() *Analysis { return v.a }

// LookupMeasure returns the measure of that name.
func LookupMeasure(name string) (Measure, bool) {
	m, ok := measures[name]
	return m, ok
}

// Take is the measure's numbers for the view, on workload entry group.
func (ms Measure) Take(v MeasureView, group string) (Metrics, Samples) {
	m := ms.fn(v, group)
	var s Samples
	if ms.flows != nil {
		s = ms.flows(v, group)
	}
	return m, s
}

// measureRun takes a variant's measures: cfg.Measure when set (an
// unknown one is an error), else the one its experiment file's
// `reproduce:` block names, else every measure that gives a number on
// this run beyond the base RTT.
func measureRun(a *Analysis, variant, source string, plan *topology.Plan, cfg Config) ([]Measured, error) {
	name, group := cfg.Measure, cfg.Group
	if _, ok := measures[name]; name != "" && !ok {
		return nil, fmt.Errorf("measure %q is not one of %v", name, MeasureNames())
	}
	if name == "" {
		name, group = reproduceMeasure(source)
		if _, ok := measures[name]; name != "" && !ok {
			a.Warnings = append(a.Warnings, fmt.Sprintf("the experiment's reproduce.measure %q is not one of %v: taking every measure that applies", name, MeasureNames()))
			name, group = "", ""
		}
	}
	rate := bottleneckRate(a, plan, cfg)
	v := NewMeasureView(a, rate)
	if name != "" {
		ms := measures[name]
		m, s := ms.Take(v, group)
		return []Measured{{Variant: variant, Measure: name, Group: group, Metrics: m, Samples: s, RateBps: rate}}, nil
	}
	var out []Measured
	for _, name := range MeasureNames() {
		m, s := measures[name].Take(v, "")
		if applies(m) {
			out = append(out, Measured{Variant: variant, Measure: name, Metrics: m, Samples: s, RateBps: rate})
		}
	}
	return out, nil
}

// applies: the measure gave a number (or "never") beyond the base RTT,
// which every run has.
func applies(m Metrics) bool {
	for k, x := range m {
		if k != "base_rtt" && !math.IsNaN(x) {
			return true
		}
	}
	return false
}

// reproduceMeasure is the measure and group an experiment file's
// `reproduce:` block names ("" without one, or if the text does not
// parse: the run was made from it, so that only happens to a hand-edited
// run.json).
func reproduceMeasure(source string) (name, group string) {
	var f struct {
		Reproduce struct {
			Measure string `yaml:"measure"`
			Group   string `yaml:"group"`
		} `yaml:"reproduce"`
	}
	if yaml.Unmarshal([]byte(source), &f) != nil {
		return "", ""
	}
	return f.Reproduce.Measure, f.Reproduce.Group
}

// bottleneckRate is the rate the measures compare with: the receiver h0's
// link (the suite's stars' bottleneck, where every incast lands), else
// the link of the port whose queue peaked highest, else the configured
// bottleneck of bare captures.
func bottleneckRate(a *Analysis, plan *topology.Plan, cfg Config) float64 {
	if plan == nil {
		return float64(cfg.BottleneckBps)
	}
	if _, l, ok := plan.HostPort("h0"); ok {
		return float64(l.Rate.BitsPerSecond())
	}
	if q := NewMeasureView(a, 0).BottleneckQueue(); q != nil {
		for _, l := range plan.Links {
			if (l.A.Node == q.Port.Node && l.A.Iface == q.Port.Iface) || (l.B.Node == q.Port.Node && l.B.Iface == q.Port.Iface) {
				return float64(l.Rate.BitsPerSecond())
			}
		}
	}
	return float64(cfg.BottleneckBps)
}
