package report

import (
	"bytes"
	"fmt"
	"math"
	"sort"

	"cclab/analysis/metrics"
)

// Comparison is the papers' style of table across runs (e.g. random seeds): one metric
// per law per run, and each law's ratio to a baseline law.
type Comparison struct {
	Runs     []string `json:"runs"`
	Laws     []string `json:"laws"`
	Baseline string   `json:"baseline"`
	Metrics  []Compared
	// Pooled are the laws' percentiles over every run's flows with their
	// intervals, Ratios each law's over the baseline's (paired by flow).
	Pooled []HeadlineRow `json:"pooled"`
	Ratios []RatioRow    `json:"ratios"`
	// Partial: each compared run a signal interrupted, or whose captures
	// are cut, with why (the runs' AlertLines).
	Partial []string `json:"partial,omitempty"`
}

// Compared is one metric over runs and laws.
type Compared struct {
	Name   string          `json:"name"`
	Values [][]metrics.Num `json:"values"` // [run][law]
}

type pick struct {
	name string
	get  func(CCTable) metrics.Num
}

var comparedMetrics = []pick{
	{"p99.9 short-flow slowdown", func(t CCTable) metrics.Num { return t.Slowdown.Short.P999 }},
	{"p99 short-flow slowdown", func(t CCTable) metrics.Num { return t.Slowdown.Short.P99 }},
	{"p99 slowdown, all flows", func(t CCTable) metrics.Num { return t.Slowdown.All.P99 }},
	{"p50 slowdown, all flows", func(t CCTable) metrics.Num { return t.Slowdown.All.P50 }},
	{"p99 long-flow slowdown", func(t CCTable) metrics.Num { return t.Slowdown.Long.P99 }},
}

// Compare builds the comparison; baseline "" picks the first law by name.
func Compare(names []string, as []*Analysis, baseline string) (*Comparison, error) {
	lawSet := map[string]bool{}
	for _, a := range as {
		for _, t := range a.ByCC {
			lawSet[t.CC] = true
		}
	}
	c := &Comparison{Runs: names}
	for l := range lawSet {
		c.Laws = append(c.Laws, l)
	}
	sort.Strings(c.Laws)
	if len(c.Laws) == 0 {
		return nil, ErrEmpty
	}
	if baseline == "" {
		baseline = c.Laws[0]
	}
	if !lawSet[baseline] {
		return nil, fmt.Errorf("baseline law %q is not in the runs (they have %v)", baseline, c.Laws)
	}
	c.Baseline = baseline
	for i, a := range as {
		for _, l := range a.AlertLines() {
			c.Partial = append(c.Partial, names[i]+": "+l)
		}
	}
	c.Pooled, c.Ratios = Headlines(as...), Ratios(as, baseline)
	for _, m := range comparedMetrics {
		cm := Compared{Name: m.name}
		for _, a := range as {
			row := make([]metrics.Num, len(c.Laws))
			for i := range row {
				row[i] = metrics.Num(math.NaN())
			}
			for _, t := range a.ByCC {
				row[sort.SearchStrings(c.Laws, t.CC)] = m.get(t)
			}
			cm.Values = append(cm.Values, row)
		}
		c.Metrics = append(c.Metrics, cm)
	}
	return c, nil
}

// Tables renders each metric: a row per run, the mean over runs, a column
// per law and a column per law's ratio to the baseline.
func (c *Comparison) Tables() []Table {
	bi := sort.SearchStrings(c.Laws, c.Baseline)
	var out []Table
	for _, m := range c.Metrics {
		t := Table{Title: m.Name, Header: []string{"run"}}
		t.Header = append(t.Header, c.Laws...)
		for _, l := range c.Laws {
			if l != c.Baseline {
				t.Header = append(t.Header, l+" / "+c.Baseline)
			}
		}
		means := make([]float64, len(c.Laws))
		counts := make([]int, len(c.Laws))
		row := func(name string, vals []float64) []string {
			r := []string{name}
			for _, v := range vals {
				r = append(r, fmtF(v))
			}
			for i, v := range vals {
				if i != bi {
					r = append(r, fmtF(v/vals[bi]))
				}
			}
			return r
		}
		for ri, vals := range m.Values {
			fs := make([]float64, len(vals))
			for i, v := range vals {
				fs[i] = v.F()
				if !math.IsNaN(fs[i]) {
					means[i] += fs[i]
					counts[i]++
				}
			}
			t.Rows = append(t.Rows, row(c.Runs[ri], fs))
		}
		if len(m.Values) > 1 {
			for i := range means {
				if counts[i] == 0 {
					means[i] = math.NaN()
				} else {
					means[i] /= float64(counts[i])
				}
			}
			t.Rows = append(t.Rows, row("mean", means))
		}
		out = append(out, t)
	}
	return out
}

// Markdown renders every comparison table.
func (c *Comparison) Markdown() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# cclab comparison of %d runs\n\n", len(c.Runs))
	for _, l := range c.Partial {
		fmt.Fprintf(&b, "**%s**\n\n", l)
	}
	fmt.Fprintf(&b, "Ratios are each law's value over %s's; below 1 is better.\n", c.Baseline)
	for _, t := range c.Tables() {
		t.markdown(&b)
	}
	return b.Bytes()
}

// HTML is compare.html: first the pooled table with intervals and the
// ratios to the baseline, then each run's numbers.
func (c *Comparison) HTML() []byte {
	var b bytes.Buffer
	title := fmt.Sprintf("cclab comparison of %d runs", len(c.Runs))
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title><style>%s</style></head><body>\n<h1>%s</h1>\n", title, pageStyle, title)
	alertHTML(&b, c.Partial)
	headlineHTML(&b, c.Pooled, fmt.Sprintf("Pooled over the %d runs.", len(c.Runs)))
	ratiosHTML(&b, c.Ratios, c.Baseline)
	b.WriteString("<h2>Each run</h2>\n")
	for _, t := range c.Tables() {
		t.html(&b)
	}
	b.WriteString("</body></html>\n")
	return b.Bytes()
}
