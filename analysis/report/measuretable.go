package report

import (
	"fmt"
	"math"
	"strings"
)

// MeasureTable is every measure taken, one row per variant and metric,
// in the metric's unit (measures.csv, and the pages).
func (a *Analysis) MeasureTable() Table {
	t := Table{Title: "Measures (the numbers the reproduction suite's claims judge)",
		Header: []string{"variant", "measure", "group", "metric", "value", "unit", "what"}}
	for _, m := range a.Measures {
		for _, mt := range measures[m.Measure].Metrics {
			t.Rows = append(t.Rows, []string{m.Variant, m.Measure, m.Group, mt.Key, mt.Format(m.Metrics.Get(mt.Key)), mt.Unit, mt.Label})
		}
	}
	return t
}

// measureLines are the measures on screen: one line per variant and
// measure, its metrics in their units, when each variant has one (the
// measure its file names); a run whose file names none gets every measure
// that applies, which would not fit the screen: one line says where they
// are.
func measureLines(a *Analysis) []string {
	var l []string
	names := map[string]bool{}
	for _, m := range a.Measures {
		names[m.Measure] = true
	}
	if len(names) > 1 {
		return []string{fmt.Sprintf("measures: %d (%d numbers per variant) in measures.csv and the report; an experiment's reproduce.measure names the one to show here",
			len(names), len(a.MeasureTable().Rows)/max(1, len(a.ByCC)))}
	}
	for _, m := range a.Measures {
		var parts []string
		for _, mt := range measures[m.Measure].Metrics {
			x := m.Metrics.Get(mt.Key)
			switch {
			case math.IsNaN(x): // not measured on this run
			case mt.Unit == "" || math.IsInf(x, 0):
				parts = append(parts, mt.Key+" "+mt.Format(x))
			default:
				parts = append(parts, mt.Key+" "+mt.Format(x)+" "+mt.Unit)
			}
		}
		name := m.Measure
		if m.Group != "" {
			name += " of " + m.Group
		}
		l = append(l, fmt.Sprintf("measure %s, %s: %s", name, m.Variant, strings.Join(parts, ", ")))
	}
	return l
}
