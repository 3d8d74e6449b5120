package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"

	"cclab/analysis/metrics"
	"cclab/analysis/stats"
)

// The headline table: per law, the slowdown percentiles the papers
// report, each with its 95 % interval and the flows it was taken over,
// pooled over every run given (the seeds of an experiment). It is the
// first screen of report.html and compare.html.

// StatCell is one percentile with its interval.
type StatCell struct {
	Est    float64
	CI     stats.Interval
	N      int
	TooFew bool // fewer flows than the percentile needs: the estimate is the largest
}

// MarshalJSON writes the cell with its interval; infinities (a bound the
// flows cannot give, a flow that never completed) as "inf" / "-inf".
func (c StatCell) MarshalJSON() ([]byte, error) {
	f := func(x float64) any {
		switch {
		case math.IsNaN(x):
			return nil
		case math.IsInf(x, 1):
			return "inf"
		case math.IsInf(x, -1):
			return "-inf"
		}
		return x
	}
	return json.Marshal(map[string]any{"est": f(c.Est), "lo": f(c.CI.Lo), "hi": f(c.CI.Hi), "n": c.N, "too_few": c.TooFew})
}

// HeadlineRow is one law's row.
type HeadlineRow struct {
	CC        string     `json:"cc"`
	Emulation string     `json:"emulation"` // the runs' fidelity verdicts, summed up
	Runs      int        `json:"runs"`
	Flows     int        `json:"flows"`
	Complete  int        `json:"complete"`
	Cells     []StatCell `json:"cells"`
}

// headlineCols are the columns: a size class and a percentile.
var headlineCols = []struct {
	name  string
	class string // all, short, long
	p     float64
}{
	{"p50, all flows", "all", 50}, {"p99, all flows", "all", 99}, {"p99 short", "short", 99},
	{"p99.9 short", "short", 99.9}, {"p99 long", "long", 99},
}

// Headlines pools the flows of every analysis per law. A flow that did
// not complete counts as a slowdown longer than any (it sorts last).
func Headlines(as ...*Analysis) []HeadlineRow {
	type acc struct {
		runs, flows, complete int
		faithful, degraded    int
		by                    map[string][]float64
	}
	laws := map[string]*acc{}
	for _, a := range countedRuns(as) {
		verdict := verdicts(a)
		cl := a.Config.Classes
		if cl.ShortBelow == 0 {
			cl = metrics.DefaultClasses
		}
		seen := map[string]bool{}
		for _, f := range a.Flows {
			x := laws[f.CC]
			if x == nil {
				x = &acc{by: map[string][]float64{}}
				laws[f.CC] = x
			}
			if !seen[f.CC] {
				seen[f.CC] = true
				x.runs++
				switch verdict[f.CC] {
				case "faithful":
					x.faithful++
				case "":
				default:
					x.degraded++
				}
			}
			x.flows++
			s := math.Inf(1)
			if f.Complete {
				x.complete++
				s = f.Slowdown.F()
			}
			if math.IsNaN(s) {
				continue
			}
			x.by["all"] = append(x.by["all"], s)
			if f.Size < cl.ShortBelow {
				x.by["short"] = append(x.by["short"], s)
			}
			if f.Size >= cl.LongAtLeast {
				x.by["long"] = append(x.by["long"], s)
			}
		}
	}
	var out []HeadlineRow
	for cc, x := range laws {
		r := HeadlineRow{CC: cc, Runs: x.runs, Flows: x.flows, Complete: x.complete}
		switch {
		case x.faithful+x.degraded == 0:
			r.Emulation = "-"
		case x.degraded == 0:
			r.Emulation = "faithful"
		default:
			r.Emulation = fmt.Sprintf("%d of %d runs degraded", x.degraded, x.runs)
		}
		for _, c := range headlineCols {
			est, ci, n := stats.Percentile(x.by[c.class], c.p, stats.Conf)
			r.Cells = append(r.Cells, StatCell{Est: est, CI: ci, N: n, TooFew: n < stats.MinFlows(c.p)})
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b HeadlineRow) int { return strings.Compare(a.CC, b.CC) })
	return out
}

// countedRuns are the analyses whose flows the tables pool: per law, its
// faithful runs when it has one (a degraded run measured the machine),
// else all of them. A law's flows stay in one analysis (one run): an
// analysis of an experiment directory holds several laws, each judged on
// its own, so the cut is per law and run.
func countedRuns(as []*Analysis) []*Analysis {
	faithful := map[string]bool{}
	for _, a := range as {
		for cc, v := range verdicts(a) {
			faithful[cc] = faithful[cc] || v == "faithful"
		}
	}
	var out []*Analysis
	for _, a := range as {
		v := verdicts(a)
		keep := *a
		keep.Flows = nil
		for _, f := range a.Flows {
			if !faithful[f.CC] || v[f.CC] == "faithful" {
				keep.Flows = append(keep.Flows, f)
			}
		}
		out = append(out, &keep)
	}
	return out
}

// verdicts are an analysis' fidelity verdicts by law.
func verdicts(a *Analysis) map[string]string {
	v := map[string]string{}
	for _, f := range a.Fidelity {
		v[f.Variant] = f.Verdict
	}
	if len(a.Fidelity) == 1 && len(a.ByCC) == 1 {
		v[a.ByCC[0].CC] = a.Fidelity[0].Verdict
	}
	return v
}

// cellText is a cell as the page shows it: the estimate, its interval,
// n; "max of n" where n is below what the percentile needs.
func (c StatCell) cellText() string {
	if c.N == 0 || math.IsNaN(c.Est) {
		return "-"
	}
	if c.TooFew {
		return fmt.Sprintf("%s (max of %d)", fnum(c.Est), c.N)
	}
	lo, hi := fnum(c.CI.Lo), fnum(c.CI.Hi)
	if c.CI.NoLower {
		lo = "no bound"
	}
	if c.CI.NoUpper {
		hi = "no bound"
	}
	return fmt.Sprintf("%s [%s, %s] n=%d", fnum(c.Est), lo, hi, c.N)
}

func fnum(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "&infin;"
	case math.IsInf(x, -1):
		return "-&infin;"
	case math.IsNaN(x):
		return "-"
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// headlineHTML writes the table.
func headlineHTML(b *bytes.Buffer, rows []HeadlineRow, what string) {
	fmt.Fprintf(b, "<h2>Slowdowns by law</h2>\n<p>%s Each cell: the percentile of the pooled flows' slowdowns, its 95 %% order-statistic interval, and the flows it was taken over; a flow that did not complete counts as slower than any (&infin;); &ldquo;no bound&rdquo; where the flows are too few to bound a side (a p99 from 368 flows up, a p99.9 from 3688). Where there are fewer flows than the percentile needs (p99.9: 1000) the number is the slowest flow's (&ldquo;max of n&rdquo;). Runs judged degraded are left out when a law has a faithful one.</p>\n", html.EscapeString(what))
	b.WriteString("<table class=\"headline\"><tr><th>law</th><th>emulation</th><th>runs</th><th>flows (complete)</th>")
	for _, c := range headlineCols {
		fmt.Fprintf(b, "<th>%s</th>", html.EscapeString(c.name))
	}
	b.WriteString("</tr>\n")
	for _, r := range rows {
		fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td>%d</td><td>%d (%d)</td>", html.EscapeString(r.CC), html.EscapeString(r.Emulation), r.Runs, r.Flows, r.Complete)
		for _, c := range r.Cells {
			fmt.Fprintf(b, "<td>%s</td>", c.cellText())
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
}
