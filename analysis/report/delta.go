package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"cclab/analysis/metrics"
)

// Delta is two analyses side by side: per law present in either, each
// headline metric in A and B, B - A and B / A - 1, and each side's
// emulation verdict (`cclab compare`).
type Delta struct {
	A    string     `json:"a"`
	B    string     `json:"b"`
	Rows []DeltaRow `json:"rows"`
	// Partial: why A's or B's numbers are partial (their AlertLines).
	Partial []string `json:"partial,omitempty"`
}

// DeltaRow is one law's metric in both runs.
type DeltaRow struct {
	Law      string      `json:"law"`
	Metric   string      `json:"metric"`
	A        metrics.Num `json:"a"` // NaN (null) when the run has no such law
	B        metrics.Num `json:"b"`
	Diff     metrics.Num `json:"diff"`     // B - A
	Rel      metrics.Num `json:"relative"` // B / A - 1
	VerdictA string      `json:"verdict_a,omitempty"`
	VerdictB string      `json:"verdict_b,omitempty"`
}

// CompareTwo builds the side-by-side of a and b (named na, nb).
func CompareTwo(na string, a *Analysis, nb string, b *Analysis) *Delta {
	d := &Delta{A: na, B: nb}
	for _, l := range a.AlertLines() {
		d.Partial = append(d.Partial, "A: "+l)
	}
	for _, l := range b.AlertLines() {
		d.Partial = append(d.Partial, "B: "+l)
	}
	byLaw := func(x *Analysis) (map[string]CCTable, map[string]string) {
		t, v := map[string]CCTable{}, map[string]string{}
		for _, c := range x.ByCC {
			t[c.CC] = c
		}
		for _, f := range x.Fidelity {
			v[f.Variant] = f.Verdict
		}
		return t, v
	}
	ta, va := byLaw(a)
	tb, vb := byLaw(b)
	var laws []string
	seen := map[string]bool{}
	for _, x := range []*Analysis{a, b} {
		for _, c := range x.ByCC {
			if !seen[c.CC] {
				seen[c.CC] = true
				laws = append(laws, c.CC)
			}
		}
	}
	nan := metrics.Num(math.NaN())
	for _, l := range laws {
		for _, m := range comparedMetrics {
			r := DeltaRow{Law: l, Metric: m.name, A: nan, B: nan, Diff: nan, Rel: nan, VerdictA: va[l], VerdictB: vb[l]}
			if t, ok := ta[l]; ok {
				r.A = m.get(t)
			}
			if t, ok := tb[l]; ok {
				r.B = m.get(t)
			}
			if !math.IsNaN(r.A.F()) && !math.IsNaN(r.B.F()) {
				r.Diff = r.B - r.A
				if r.A != 0 {
					r.Rel = r.B/r.A - 1
				}
			}
			d.Rows = append(d.Rows, r)
		}
	}
	return d
}

// Table renders the side-by-side.
func (d *Delta) Table() Table {
	t := Table{Title: fmt.Sprintf("%s (A) against %s (B)", d.A, d.B),
		Header: []string{"law", "metric", "A", "B", "B - A", "B / A - 1", "emulation A / B"}}
	verdict := func(v string) string {
		if v == "" {
			return "-"
		}
		return v
	}
	for _, r := range d.Rows {
		rel := "-"
		if f := r.Rel.F(); !math.IsNaN(f) {
			rel = fmt.Sprintf("%+.0f %%", 100*f)
		}
		diff := "-"
		if f := r.Diff.F(); !math.IsNaN(f) {
			diff = fmt.Sprintf("%+.2f", f)
		}
		t.Rows = append(t.Rows, []string{r.Law, r.Metric, fmtF(r.A.F()), fmtF(r.B.F()), diff, rel,
			verdict(r.VerdictA) + " / " + verdict(r.VerdictB)})
	}
	return t
}

// ErrStaleSummary is a summary.json made by another version of the
// analysis (other definitions): analyse the run again.
var ErrStaleSummary = errors.New("made with other definitions")

// LoadSummary reads the summary.json an analysis wrote (dir/analysis, or
// dir itself): the tables a comparison needs, without reading captures.
func LoadSummary(dir string) (*Analysis, error) {
	for _, p := range []string{filepath.Join(dir, "analysis", "summary.json"), filepath.Join(dir, "summary.json")} {
		b, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var a Analysis
		if err := json.Unmarshal(b, &a); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if a.Version != AnalysisVersion {
			return nil, fmt.Errorf("%s: analysis version %d, this cclab makes %d: %w", p, a.Version, AnalysisVersion, ErrStaleSummary)
		}
		return &a, nil
	}
	return nil, os.ErrNotExist
}
