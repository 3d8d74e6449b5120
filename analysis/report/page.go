package report

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// SummaryLines are shown on screen and at the top of the pages.
func (a *Analysis) SummaryLines() []string {
	var l []string
	complete := 0
	for _, f := range a.Flows {
		if f.Complete {
			complete++
		}
	}
	var pk uint64
	for _, c := range a.Captures {
		pk += c.Packets
	}
	if a.Experiment != "" {
		l = append(l, fmt.Sprintf("experiment %s on %s, run %s (%s)", a.Experiment, a.Topology, a.RunID, a.Source))
	}
	l = append(l, a.AlertLines()...)
	l = append(l, a.FidelityLines()...)
	l = append(l, fmt.Sprintf("%d flows, %d complete; %d captures, %d packets", len(a.Flows), complete, len(a.Captures), pk))
	l = append(l, a.headlineTable()...)
	l = append(l, fairnessLines(a)...)
	l = append(l, measureLines(a)...)
	l = append(l, pfcLines(a)...)
	// One line for the INT options of all captures (per capture: int_summary.csv).
	if len(a.INT) > 0 {
		var opts, fwd, echo, recs, bad uint64
		for _, r := range a.INT {
			opts += r.Stats.Packets
			fwd += r.Stats.Forward
			echo += r.Stats.Echo
			recs += r.Stats.Records
			bad += r.Stats.Invalid
		}
		l = append(l, fmt.Sprintf("INT in %d captures: %d options (%d forward, %d echo), %d records, %d invalid",
			len(a.INT), opts, fwd, echo, recs, bad))
	}
	l = append(l, mismatchLines(a)...)
	for _, w := range a.Warnings {
		l = append(l, "warning: "+w)
	}
	return l
}

func (t Table) markdown(b *bytes.Buffer) {
	fmt.Fprintf(b, "\n### %s\n\n", t.Title)
	if len(t.Rows) == 0 {
		b.WriteString("(none)\n")
		return
	}
	b.WriteString("| " + strings.Join(t.Header, " | ") + " |\n")
	b.WriteString("|" + strings.Repeat(" --- |", len(t.Header)) + "\n")
	for _, r := range t.Rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
}

func (t Table) html(b *bytes.Buffer) {
	fmt.Fprintf(b, "<h3>%s</h3>\n", html.EscapeString(t.Title))
	if len(t.Rows) == 0 {
		b.WriteString("<p>(none)</p>\n")
		return
	}
	b.WriteString("<table><thead><tr>")
	for _, h := range t.Header {
		fmt.Fprintf(b, "<th>%s</th>", html.EscapeString(h))
	}
	b.WriteString("</tr></thead><tbody>\n")
	for _, r := range t.Rows {
		b.WriteString("<tr>")
		for _, c := range r {
			fmt.Fprintf(b, "<td>%s</td>", html.EscapeString(c))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody></table>\n")
}

// FidelityLines head every summary: whether the emulation under the
// numbers held (docs/fidelity.md), and for each degraded variant why.
func (a *Analysis) FidelityLines() []string {
	if len(a.Fidelity) == 0 {
		return nil
	}
	var bad []Fidelity
	verdicts := map[string]bool{}
	for _, f := range a.Fidelity {
		if f.Verdict != "faithful" {
			bad = append(bad, f)
			verdicts[f.Verdict] = true
		}
	}
	if len(bad) == 0 {
		return []string{fmt.Sprintf("emulation: faithful (%d of %d variants)", len(a.Fidelity), len(a.Fidelity))}
	}
	// "DEGRADED", "INTERRUPTED", or both.
	var words []string
	for _, v := range []string{"degraded", "interrupted"} {
		if verdicts[v] {
			words = append(words, strings.ToUpper(v))
		}
	}
	if len(words) == 0 {
		words = []string{"NOT FAITHFUL"}
	}
	l := []string{fmt.Sprintf("emulation: %s in %d of %d variants: their numbers are not results (run.json fidelity)", strings.Join(words, " or "), len(bad), len(a.Fidelity))}
	for _, f := range bad {
		l = append(l, fmt.Sprintf("  %s: %s", f.Variant, strings.Join(f.Reasons, "; ")))
	}
	return l
}

func (a *Analysis) pageTables() []Table {
	ts := []Table{a.ClassTable(), a.SideBySide(), nonEmptyBins(a.BinTable(false)), a.BinTable(true), a.FairnessTable()}
	if len(a.Queues) > 0 {
		ts = append(ts, a.QueueTable())
	}
	if len(a.Measures) > 0 {
		ts = append(ts, a.MeasureTable())
	}
	if len(a.INT) > 0 {
		ts = append(ts, a.INTTable())
	}
	if len(a.Mismatches) > 0 {
		ts = append(ts, a.MismatchTable())
	}
	return ts
}

func (a *Analysis) title() string {
	if a.RunID != "" {
		return "cclab analysis of run " + a.RunID
	}
	return "cclab analysis"
}

// Markdown is report.md: the summary, the tables, and links to the figures.
func (a *Analysis) Markdown(figs []Figure) []byte {
	var b bytes.Buffer
	zero := "each variant's first flow start"
	if a.Origin != 0 {
		zero = time.Unix(0, a.Origin).UTC().Format(time.RFC3339Nano)
	}
	fmt.Fprintf(&b, "# %s\n\nSource: `%s`. Time zero: %s. Slowdown = FCT / ideal FCT (HPCC's definition), clamped at >= 1; percentiles are nearest-rank.\n\n",
		a.title(), a.Source, zero)
	b.WriteString("```\n" + strings.Join(a.SummaryLines(), "\n") + "\n```\n")
	for _, t := range a.pageTables() {
		t.markdown(&b)
	}
	b.WriteString("\n## Figures\n")
	for _, f := range figs {
		fmt.Fprintf(&b, "\n![%s](figures/%s.png)\n", f.Caption, f.Name)
	}
	return b.Bytes()
}

const pageStyle = `body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f0f0f0}td:first-child,th:first-child{text-align:left}pre{background:#f7f7f7;padding:1em;overflow-x:auto}
.figs{display:grid;grid-template-columns:repeat(auto-fill,minmax(540px,1fr));gap:1em}.figs figure{margin:0}
.figs svg{width:100%;height:auto}figcaption{font-size:13px;color:#555}
.alert{border:2px solid #b00;background:#fff0f0;padding:.5em 1em;margin:1em 0}`

// HTML is one self-contained page: tables and every figure as inline SVG.
func (a *Analysis) HTML(figs []Figure) []byte {
	var b bytes.Buffer
	t := html.EscapeString(a.title())
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title><style>%s</style></head><body>\n<h1>%s</h1>\n", t, pageStyle, t)
	alertHTML(&b, a.AlertLines())
	fmt.Fprintf(&b, "<p>Source: <code>%s</code>. Slowdown = FCT / ideal FCT (HPCC's definition), clamped at &ge; 1; percentiles are nearest-rank.</p>\n", html.EscapeString(a.Source))
	headlineHTML(&b, Headlines(a), "This run's flows.")
	b.WriteString("<h2>Summary</h2>\n<pre>" + html.EscapeString(strings.Join(a.SummaryLines(), "\n")) + "</pre>\n")
	b.WriteString("<h2>Figures</h2>\n<div class=\"figs\">\n")
	for _, f := range figs {
		fmt.Fprintf(&b, "<figure>%s<figcaption>%s</figcaption></figure>\n", inlineSVG(f.SVG), html.EscapeString(f.Caption))
	}
	b.WriteString("</div>\n<h2>Tables</h2>\n")
	for _, tb := range a.pageTables() {
		tb.html(&b)
	}
	b.WriteString("</body></html>\n")
	return b.Bytes()
}

// inlineSVG drops the XML prolog so the SVG can sit inside HTML.
func inlineSVG(svg []byte) string {
	s := string(svg)
	if i := strings.Index(s, "<svg"); i > 0 {
		s = s[i:]
	}
	return s
}

// nonEmptyBins drops the bins without flows from a page table (the CSV
// keeps them so tables of different runs line up).
func nonEmptyBins(t Table) Table {
	rows := t.Rows[:0:0]
	for _, r := range t.Rows {
		if r[4] != "0" {
			rows = append(rows, r)
		}
	}
	t.Rows = rows
	return t
}

// fairnessLines sums the fairness groups up per congestion control (the
// bottleneck names start with it when a run compares several), one line
// each: where fairness was defined and how often Jain's index got there.
func fairnessLines(a *Analysis) []string {
	type sum struct {
		groups, intervals, converged int
		after                        []float64
	}
	by := map[string]*sum{}
	var order []string
	for _, g := range a.Fairness {
		cc, _, ok := strings.Cut(g.Bottleneck, "/")
		if !ok {
			cc = "all"
		}
		s := by[cc]
		if s == nil {
			s = &sum{}
			by[cc] = s
			order = append(order, cc)
		}
		s.groups++
		for _, c := range g.Convergence {
			s.intervals++
			if c.Converged {
				s.converged++
				s.after = append(s.after, ms(c.After))
			}
		}
	}
	var l []string
	if len(a.Fairness) > 0 || a.FairSkipped > 0 {
		l = append(l, fmt.Sprintf("fairness: where 2+ flows shared a bottleneck unchanged for %d base RTTs; Jain per %.0f ms, >= %g counted as fair (fairness.csv)",
			a.Config.FairOverlapRTTs, float64(a.Config.FairWindowNs)/1e6, a.Config.FairThreshold))
	}
	for _, cc := range order {
		s := by[cc]
		med := "-"
		if len(s.after) > 0 {
			sort.Float64s(s.after)
			med = fmt.Sprintf("%.0f ms", s.after[len(s.after)/2])
		}
		l = append(l, fmt.Sprintf("  %-15s %d bottlenecks, fair in %d of %d such intervals, median time to fair %s",
			cc, s.groups, s.converged, s.intervals, med))
	}
	if a.FairSkipped > 0 {
		l = append(l, fmt.Sprintf("  not defined on %d bottlenecks (no such interval)", a.FairSkipped))
	}
	return l
}

// mismatchLines says where flows.csv and the captures disagree, by kind:
// a late reader (the last byte arrived well before the receiver's read:
// flows.csv's FCT includes the wait), a SYN outside its window, anything
// else (bytes, unfinished, not captured).
func mismatchLines(a *Analysis) []string {
	if len(a.Mismatches) == 0 {
		return nil
	}
	var late []float64
	syn, other := 0, 0
	for _, m := range a.Mismatches {
		switch {
		case strings.HasPrefix(m.Reason, "last byte arrived") && m.EndDelta < 0:
			late = append(late, ms(-m.EndDelta))
		case strings.HasPrefix(m.Reason, "SYN"):
			syn++
		default:
			other++
		}
	}
	l := []string{fmt.Sprintf("%d of %d flows where flows.csv and the captures disagree (mismatches.csv):", len(a.Mismatches), len(a.Flows))}
	if len(late) > 0 {
		sort.Float64s(late)
		l = append(l, fmt.Sprintf("  %d read their last byte more than a quarter RTT after it arrived (median %.1f ms, max %.1f ms): the reader's wait, not in their FCT (which ends at the arrival)",
			len(late), late[len(late)/2], late[len(late)-1]))
	}
	if syn > 0 {
		l = append(l, fmt.Sprintf("  %d SYNs outside [connect - RTT/4, connect + the host queue's drain + RTT/4]", syn))
	}
	if n := len(a.Mismatches) - len(late) - syn; n > 0 {
		l = append(l, fmt.Sprintf("  %d others (bytes, unfinished or uncaptured flows, the last byte after the read)", n))
	}
	return l
}

// headlineTable is the first screen's table: one row per law, its
// emulation verdict, and the FCT slowdowns the papers headline, the best
// of each column (among faithful variants, when any) marked with *.
func (a *Analysis) headlineTable() []string {
	verdict := map[string]string{}
	for _, f := range a.Fidelity {
		verdict[f.Variant] = f.Verdict
	}
	// A single run's verdict is its directory's: it is the one law's.
	if len(a.Fidelity) == 1 && len(a.ByCC) == 1 {
		verdict[a.ByCC[0].CC] = a.Fidelity[0].Verdict
	}
	type col struct {
		name string
		get  func(c CCTable) float64
	}
	cols := []col{
		{"p50", func(c CCTable) float64 { return c.Slowdown.All.P50.F() }},
		{"p99", func(c CCTable) float64 { return c.Slowdown.All.P99.F() }},
		{"p99.9", func(c CCTable) float64 { return c.Slowdown.All.P999.F() }},
		{"short p99.9", func(c CCTable) float64 { return c.Slowdown.Short.P999.F() }},
		{"long p99", func(c CCTable) float64 { return c.Slowdown.Long.P99.F() }},
	}
	anyFaithful := false
	for _, c := range a.ByCC {
		anyFaithful = anyFaithful || verdict[c.CC] == "faithful"
	}
	counts := func(c CCTable) bool { return !anyFaithful || verdict[c.CC] == "faithful" }
	best := make([]float64, len(cols))
	for i, k := range cols {
		best[i] = math.Inf(1)
		for _, c := range a.ByCC {
			if v := k.get(c); counts(c) && !math.IsNaN(v) && v < best[i] {
				best[i] = v
			}
		}
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "law\temulation\tcomplete\t")
	for _, k := range cols {
		fmt.Fprintf(tw, "%s\t", k.name)
	}
	fmt.Fprintln(tw)
	for _, c := range a.ByCC {
		v := verdict[c.CC]
		if v == "" {
			v = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t", c.CC, v, c.Complete, c.Flows)
		for i, k := range cols {
			x := k.get(c)
			mark := ""
			if counts(c) && x == best[i] {
				mark = "*"
			}
			fmt.Fprintf(tw, "%s%s\t", fmtF(x), mark)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	l := []string{"FCT slowdown (FCT / ideal FCT) per law; * best of the column" + map[bool]string{true: " among faithful variants", false: ""}[anyFaithful && len(a.Fidelity) > 0] + ":"}
	for _, line := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		l = append(l, strings.TrimRight(line, " "))
	}
	return l
}
