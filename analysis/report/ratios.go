package report

import (
	"bytes"
	"fmt"
	"html"
	"maps"
	"math"
	"slices"
	"strings"

	"cclab/analysis/metrics"
	"cclab/analysis/stats"
)

// RatioRow is one law's headline percentiles over the baseline's, with a
// paired bootstrap interval: within each run the same flows (same
// arrival and size) of both laws are drawn together, the runs with
// replacement.
type RatioRow struct {
	CC    string     `json:"cc"`
	Cells []StatCell `json:"cells"`
}

// flowKey is a flow's id without its variant's prefix (merge.go): the
// same flow in every law's run of a seed.
func flowKey(id string) string {
	if i := strings.LastIndex(id, "/"); i >= 0 {
		return id[i+1:]
	}
	return id
}

// Ratios gives every law's ratio to base for each headline column.
func Ratios(as []*Analysis, base string) []RatioRow {
	type cls = map[string]float64 // flow key -> slowdown
	// per run: law -> class -> flows
	var runs []map[string]map[string]cls
	laws := map[string]bool{}
	for _, a := range countedRuns(as) {
		cl := a.Config.Classes
		if cl.ShortBelow == 0 {
			cl = metrics.DefaultClasses
		}
		r := map[string]map[string]cls{}
		for _, f := range a.Flows {
			laws[f.CC] = true
			if r[f.CC] == nil {
				r[f.CC] = map[string]cls{"all": {}, "short": {}, "long": {}}
			}
			s := math.Inf(1)
			if f.Complete {
				s = f.Slowdown.F()
			}
			if math.IsNaN(s) {
				continue
			}
			k := flowKey(f.ID)
			r[f.CC]["all"][k] = s
			if f.Size < cl.ShortBelow {
				r[f.CC]["short"][k] = s
			}
			if f.Size >= cl.LongAtLeast {
				r[f.CC]["long"][k] = s
			}
		}
		runs = append(runs, r)
	}
	var out []RatioRow
	for _, row := range Headlines(as...) {
		if row.CC == base || !laws[base] {
			continue
		}
		rr := RatioRow{CC: row.CC}
		for _, c := range headlineCols {
			var seeds []stats.Paired
			n := 0
			for _, r := range runs {
				var p stats.Paired
				// In key order: the bootstrap draws positions, so a
				// map's random order would change the interval.
				for _, k := range slices.Sorted(maps.Keys(r[row.CC][c.class])) {
					if y, ok := r[base][c.class][k]; ok {
						p.A, p.B = append(p.A, r[row.CC][c.class][k]), append(p.B, y)
					}
				}
				if len(p.A) > 0 {
					seeds = append(seeds, p)
					n += len(p.A)
				}
			}
			cell := StatCell{Est: math.NaN(), N: n, TooFew: n < stats.MinFlows(c.p)}
			if n > 0 {
				p := c.p
				cell.Est, cell.CI = stats.RatioCI(seeds, func(s []float64) float64 { return metrics.Percentile(s, p) }, 0, 1, stats.Conf)
			}
			rr.Cells = append(rr.Cells, cell)
		}
		out = append(out, rr)
	}
	return out
}

// ratiosHTML writes the ratio table.
func ratiosHTML(b *bytes.Buffer, rows []RatioRow, base string) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "<h2>Each law over %s</h2>\n<p>The same percentile of the flows both laws ran (paired by flow in each run), law / %s: below 1 is better. 95 %% interval from a bootstrap over the runs and, within each, the same flows of both laws (2000 resamples, fixed seed).</p>\n", html.EscapeString(base), html.EscapeString(base))
	b.WriteString("<table class=\"ratios\"><tr><th>law</th>")
	for _, c := range headlineCols {
		fmt.Fprintf(b, "<th>%s</th>", html.EscapeString(c.name))
	}
	b.WriteString("</tr>\n")
	for _, r := range rows {
		fmt.Fprintf(b, "<tr><td>%s / %s</td>", html.EscapeString(r.CC), html.EscapeString(base))
		for _, c := range r.Cells {
			fmt.Fprintf(b, "<td>%s</td>", c.cellText())
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
}
