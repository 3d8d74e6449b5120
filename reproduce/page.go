package reproduce

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Files Publish writes under the docs directory.
const (
	ResultsPage = "results.md"
	ResultsDir  = "results"      // figures, the store and the health page, under docs/
	StoreFile   = "results.json" // under docs/results/
	HealthFile  = "health.md"    // under docs/results/; generated whole, so no hand-written page holds generated text
)

// Publish copies each outcome's figures under docs/results/<name>/, merges
// the outcomes into docs/results/results.json (outcomes of experiments not
// run this time are kept) and regenerates docs/results.md and
// docs/results/health.md from that store.
func Publish(outs []*Outcome, docs string) error {
	store, err := readStore(docs)
	if err != nil {
		return err
	}
	for _, o := range outs {
		if err := copyFigures(o, docs); err != nil {
			return err
		}
		store[o.Name] = o
	}
	for _, o := range store {
		if err := writePaperFigure(o, docs); err != nil {
			return err
		}
	}
	if err := writeStore(docs, store); err != nil {
		return err
	}
	ordered := order(store)
	if err := atomicWrite(filepath.Join(docs, ResultsPage), ResultsMarkdown(ordered)); err != nil {
		return err
	}
	return atomicWrite(filepath.Join(docs, ResultsDir, HealthFile), HealthMarkdown(ordered))
}

// Rejudge checks the stored runs' claims again against the experiment
// files as they are now: a claim's paper number, reading or note edited in
// experiments/reproduce/*.yaml takes effect without running anything. The
// runs' measurements are kept; claims of experiments no longer in exps
// keep their verdicts. It returns how many experiments it judged.
func Rejudge(exps []*Experiment, docs string) (int, error) {
	store, err := readStore(docs)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range exps {
		if o, ok := store[e.Name]; ok {
			o.Title, o.Paper = e.Title, e.Paper
			judge(e, o)
			n++
		}
	}
	return n, writeStore(docs, store)
}

func readStore(docs string) (map[string]*Outcome, error) {
	store := map[string]*Outcome{}
	b, err := os.ReadFile(filepath.Join(docs, ResultsDir, StoreFile))
	if errors.Is(err, os.ErrNotExist) {
		return store, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &store); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(docs, ResultsDir, StoreFile), err)
	}
	return store, nil
}

// writeStore writes the store compact: its per-flow samples are most of
// it, and indented they would triple its size.
func writeStore(docs string, store map[string]*Outcome) error {
	b, err := json.Marshal(store)
	if err != nil {
		return err
	}
	return atomicWrite(filepath.Join(docs, ResultsDir, StoreFile), append(b, '\n'))
}

// order lists the stored outcomes in the suite's order (Order, then
// name; the smoke experiment, order 0, last).
func order(store map[string]*Outcome) []*Outcome {
	var out []*Outcome
	for _, o := range store {
		out = append(out, o)
	}
	key := func(o *Outcome) int {
		if o.Order == 0 {
			return math.MaxInt
		}
		return o.Order
	}
	slices.SortFunc(out, func(a, b *Outcome) int {
		if key(a) != key(b) {
			return key(a) - key(b)
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// copyFigures copies the chosen PNGs of every variant that ran in the
// first seed's run (docs/results/<name>/<cc>-seed<seed>-<figure>.png),
// with the side-by-side figures of its claims (sidebyside.go); the other
// seeds' figures stay in their run directories, which the page names.
func copyFigures(o *Outcome, docs string) error {
	dst := filepath.Join(docs, ResultsDir, o.Name)
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	for ri := range o.Runs {
		r := &o.Runs[ri]
		if ri > 0 {
			for i := range r.Variants {
				r.Variants[i].Figures = nil
			}
			continue
		}
		for i := range r.Variants {
			v := &r.Variants[i]
			v.Figures = nil
			if v.Status != "ran" {
				continue
			}
			stems := slices.Clone(o.Figures)
			side, err := filepath.Glob(filepath.Join(v.Dir, "analysis", "figures", sideBySidePrefix+"*.png"))
			if err != nil {
				return err
			}
			for _, f := range side {
				stems = append(stems, strings.TrimSuffix(filepath.Base(f), ".png"))
			}
			for _, fig := range stems {
				src := filepath.Join(v.Dir, "analysis", "figures", fig+".png")
				b, err := os.ReadFile(src)
				if errors.Is(err, os.ErrNotExist) {
					continue // no data for this figure in this run
				}
				if err != nil {
					return err
				}
				name := fmt.Sprintf("%s-seed%d-%s.png", v.CC, r.Seed, fig)
				if err := atomicWrite(filepath.Join(dst, name), b); err != nil {
					return err
				}
				v.Figures = append(v.Figures, filepath.ToSlash(filepath.Join(ResultsDir, o.Name, name)))
			}
		}
	}
	return nil
}

// writePaperFigure (re)draws the outcome's claims-against-the-paper
// figure from its stored claims.
func writePaperFigure(o *Outcome, docs string) error {
	png, err := paperFigure(o)
	if err != nil {
		return err
	}
	o.PaperFigure = ""
	if png == nil {
		return nil
	}
	if err := atomicWrite(filepath.Join(docs, ResultsDir, o.Name, "paper.png"), png); err != nil {
		return err
	}
	o.PaperFigure = filepath.ToSlash(filepath.Join(ResultsDir, o.Name, "paper.png"))
	return nil
}

func atomicWrite(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path+".tmp", b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.Rename(path+".tmp", path)
}

var verdictMark = map[string]string{Agrees: "agrees", Disagrees: "**disagrees**", Inconclusive: "inconclusive",
	TooFew: "too few", NotMeasurableHere: "not measurable here", DegradedRuns: "degraded runs",
	CouldNotRun: "could not run", NotMeasurable: "not measurable"}

// verdictCell is the verdict as the summary table shows it.
func verdictCell(c ClaimOutcome) string {
	v := verdictMark[c.Verdict]
	if v == "" {
		v = c.Verdict // a store written by an older build
	}
	switch {
	case c.Verdict == TooFew:
		v += fmt.Sprintf(" (n = %d of %d)", c.N, c.Need)
	case c.DirectionHolds:
		v += " (direction holds)"
	}
	return v
}

// paperCell is the paper's number in its unit, and its statistic where
// the claim reads another.
func paperCell(c ClaimOutcome) string {
	var s string
	switch p := c.Paper.Value; {
	case p == nil:
		s = "no number"
	case c.Unit != "" && c.Paper.Upper != nil:
		s = num(*p, c.Unit) + " to " + num(*c.Paper.Upper, c.Unit)
	case c.Unit != "":
		s = num(*p, c.Unit)
	case strings.Contains(c.Paper.Reading, "%") && *p < 1:
		s = fmt.Sprintf("%.0f %% better", 100*(1-*p))
	case strings.Contains(c.Paper.Reading, "%"):
		s = fmt.Sprintf("%.0f %% worse", 100*(*p-1))
	default:
		s = "a/b " + f2(*p)
	}
	if c.Source == SourceDerived {
		s += " (derived)"
	}
	if ps := c.Paper.Statistic; ps != "" && ps != "unstated" && ps != c.Statistic {
		s += " at " + ps
	}
	return s
}

// Measured is the claim's number, short: statistic, value,
// [interval] and n.
func (c ClaimOutcome) Measured() string {
	if math.IsNaN(float64(c.Value)) {
		return "-"
	}
	x, unit := bare(float64(c.Value), c.Unit)
	lo, hi := float64(c.CI[0]), float64(c.CI[1])
	ci := ""
	if !math.IsNaN(lo) && !math.IsNaN(hi) {
		l, _ := bare(lo, c.Unit)
		h, _ := bare(hi, c.Unit)
		if c.Unbounded[0] {
			l = "no bound"
		}
		if c.Unbounded[1] {
			h = "no bound"
		}
		ci = " [" + l + ", " + h + "]"
	}
	return fmt.Sprintf("%s %s%s%s, n = %d", c.Statistic, x, ci, unit, c.N)
}

// bare is a number in its unit without the unit, and the unit to print
// once after an interval (" KB", " base RTTs"; "" for a ratio).
func bare(x float64, unit string) (string, string) {
	s := num(x, unit)
	switch {
	case math.IsInf(x, 0) || math.IsNaN(x):
		if unit == "" || unit == "%" {
			return s, ""
		}
		if unit == "x" {
			return s, "x"
		}
		return s, " " + unit
	case unit == "ms":
		return s, "" // durations pick their own unit per number
	case unit == "%":
		return strings.TrimSuffix(s, " %"), " %"
	case unit == "x":
		return strings.TrimSuffix(s, "x"), "x"
	case unit == "":
		return s, ""
	}
	return strings.TrimSuffix(s, " "+unit), " " + unit
}

// ResultsMarkdown is docs/results.md.
func ResultsMarkdown(outs []*Outcome) []byte {
	var b bytes.Buffer
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Results of the reproduction suite\n\n")
	p("Generated by `cclab reproduce` from the runs it made: every number below comes\n")
	p("from a run directory and its analysis; none is typed by hand. The claims, the\n")
	p("papers' numbers, each claim's statistic, the samples it needs and its band are\n")
	p("in the experiment files (experiments/reproduce/*.yaml), fixed before the runs;\n")
	p("[reproduction.md](reproduction.md) says how a claim is judged and what was\n")
	p("scaled from each paper; [results/health.md](results/health.md) gives the\n")
	p("emulation health of every run.\n\n")
	p("The page reads top down: the verdicts of every claim, then per experiment\n")
	p("its claims, the choices made after a result, and each seed's runs with their\n")
	p("figures; each claim's quote, reading, check, per-seed numbers and note are in\n")
	p("[Claim details](#claim-details) at the end, linked from its row.\n\n")
	p("Each claim's number is its statistic over every run judged faithful: a\n")
	p("percentile of the pooled flows of all its seeds, or the mean or median over\n")
	p("the runs. The interval is 95 %%: order-statistic bounds for a percentile, a\n")
	p("paired bootstrap (seeds, then the same flows of both laws) for a ratio of\n")
	p("percentiles or medians, Student's t for a mean; a time that never came within\n")
	p("a run is censored, not a number. A claim **agrees** when the whole interval is\n")
	p("inside its band, **disagrees** when the interval is outside it, and is\n")
	p("*inconclusive* when it straddles an edge; below the samples its statistic\n")
	p("needs it is *too few*. Bands: \"X %% better\" agrees for an improvement in\n")
	p("[X/2, min(2X, 100)] %%; a ratio or an absolute figure within a factor of 2;\n")
	p("a range the paper states within [0.9 x its low end, 1.1 x its high end];\n")
	p("a claim with no number against the lab's reading (a limit or a direction).\n\n")
	counts := map[string]map[string]int{}
	total := 0
	var rows bytes.Buffer
	k := 0
	for _, o := range outs {
		for _, c := range o.Claims {
			k++
			if counts[c.Verdict] == nil {
				counts[c.Verdict] = map[string]int{}
			}
			counts[c.Verdict][c.Source]++
			total++
			fmt.Fprintf(&rows, "| %d | [%s](#%s) %s | %s |\n", k, o.Name, anchor(o.Name, c.ID), cell(c.Claim), judgedCells(c))
		}
	}
	p("%s\n", summaryLine(total, counts))
	p("\n| # | claim | paper | measured: statistic [95 %% interval], n | verdict |\n| ---: | --- | --- | --- | --- |\n")
	b.Write(rows.Bytes())
	p("\n%s\n", sourceTable(counts))
	k = 0
	for _, o := range outs {
		experimentSection(&b, o, k+1)
		k += len(o.Claims)
	}
	p("\n<a id=\"claim-details\"></a>\n## Claim details\n\n")
	p("Each claim as its experiment file states it: the paper's words and where\n")
	p("they stand, how the lab reads them, the check and its band, the pooled\n")
	p("number and each run's own.\n")
	for _, o := range outs {
		if len(o.Claims) == 0 {
			continue
		}
		p("\n### %s\n", o.Name)
		for _, c := range o.Claims {
			claimDetail(&b, o, c)
		}
	}
	return b.Bytes()
}

// judgedCells are a claim's paper, measured and verdict cells, the same
// in the summary and in its experiment's table.
func judgedCells(c ClaimOutcome) string {
	return cell(paperCell(c)) + " | " + cell(c.Measured()) + " | " + verdictCell(c)
}

// verdictOrder is the summary's order.
var verdictOrder = []string{Agrees, Disagrees, Inconclusive, TooFew, NotMeasurableHere, NotMeasurable, DegradedRuns, CouldNotRun}

// summaryLine counts the claims by verdict, the paper's own numbers first.
func summaryLine(total int, counts map[string]map[string]int) string {
	line := func(src string) (int, string) {
		var parts []string
		all := 0
		for _, v := range verdictOrder {
			n := counts[v][src]
			all += n
			if n > 0 || v == Agrees || v == Disagrees {
				parts = append(parts, fmt.Sprintf("%d %s", n, plural(v, n)))
			}
		}
		return all, strings.Join(parts, ", ")
	}
	word := "claims"
	if total == 1 {
		word = "claim"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**%d %s.**", total, word)
	for _, s := range []struct{ src, name string }{{SourcePaper, "With the paper's own number"}, {SourceDerived, "With a number the lab derived"}, {SourceReading, "The lab's reading of words (no number)"}} {
		if n, parts := line(s.src); n > 0 {
			fmt.Fprintf(&b, "\n%s (%d): %s.", s.name, n, parts)
		}
	}
	return b.String()
}

// plural is a verdict after a count ("2 agree", "1 agrees").
func plural(v string, n int) string {
	if n == 1 {
		return v
	}
	switch v {
	case Agrees:
		return "agree"
	case Disagrees:
		return "disagree"
	}
	return v
}

// sourceTable counts the verdicts by where the band's number comes from:
// the paper's own, derived by the lab, or the lab's reading.
func sourceTable(counts map[string]map[string]int) string {
	var b strings.Builder
	b.WriteString("| verdict | paper's number | derived by the lab | lab's reading (no number) |\n| --- | ---: | ---: | ---: |\n")
	for _, v := range verdictOrder {
		c := counts[v]
		if len(c) == 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", v, c[SourcePaper], c[SourceDerived], c[SourceReading])
	}
	return b.String()
}

func anchor(exp, id string) string { return exp + "-" + id }

// experimentSection is one experiment's part of the page: its claims'
// verdicts (numbered as in the summary, first the claim numbered first),
// the choices made after a result, the claims against the paper's figure,
// and each seed's runs; the claims' detail is at the page's end.
func experimentSection(b *bytes.Buffer, o *Outcome, first int) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n<a id=\"%s\"></a>\n## %s: %s\n\n", o.Name, o.Name, o.Title)
	p("%s. Experiment file `%s`; started %s (%.0f s for %d seed(s)).\n", o.Paper, o.File, o.Started, o.Seconds, len(o.Runs))
	if v := o.Versions; v["revision"] != "" {
		mod := ""
		if v["modified"] == "true" {
			mod = " with uncommitted changes"
		}
		p("Built from cclab revision `%s`%s.\n", v["revision"], mod)
	}
	if o.Error != "" {
		p("\nThe experiment could not run: `%s`\n", oneLine(o.Error))
	}
	if len(o.Claims) > 0 {
		p("\n| # | claim (details) | paper | measured: statistic [95 %% interval], n | verdict |\n| ---: | --- | --- | --- | --- |\n")
		for i, c := range o.Claims {
			p("| %d | [%s](#%s): %s | %s |\n", first+i, c.ID, anchor(o.Name, c.ID), cell(c.Claim), judgedCells(c))
		}
	}
	if len(o.PostHoc) > 0 {
		p("\n**Set after a result had been seen** (post hoc; each with its physical reason):\n\n")
		for _, ph := range o.PostHoc {
			p("- %s (commit %s): %s\n", oneLine(ph.Setting), ph.Commit, oneLine(ph.Reason))
		}
	}
	if o.PaperFigure != "" {
		p("\nThe claims with the paper's number beside it: each seed's number and the pooled interval over the paper's figure, with the band of agreement.\n\n![%s against the paper](%s)\n", o.Name, o.PaperFigure)
	}
	for _, r := range o.Runs {
		seedSection(b, o, r)
	}
}

// claimDetail is one claim with its quote, rule, per-seed numbers and note.
func claimDetail(b *bytes.Buffer, o *Outcome, c ClaimOutcome) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n<a id=\"%s\"></a>\n#### %s: %s\n\n", anchor(o.Name, c.ID), c.ID, oneLine(c.Claim))
	p("- Paper (%s): \"%s\"", oneLine(c.Paper.Where), oneLine(c.Paper.Quote))
	if c.Paper.Reading != "" {
		p(" Read as: %s.", strings.TrimSuffix(oneLine(c.Paper.Reading), "."))
	}
	p("\n- Number: %s; %s.\n", paperCell(c), map[string]string{SourcePaper: "the paper's own", SourceDerived: "derived by the lab from the paper's words",
		SourceReading: "the lab's reading; the paper gives no number"}[c.Source])
	if ps := c.Paper.Statistic; ps != "" && ps != "unstated" && ps != c.Statistic {
		p("- The paper's statistic is the %s; read here as the %s, which the suite's flows support (the %s is for a sweep with more seeds).\n", ps, c.Statistic, ps)
	}
	need := "flows"
	if !strings.HasPrefix(c.Statistic, "p") {
		need = "runs"
	}
	p("- Check: %s, needs n >= %d %s; agrees in %s.\n", c.Check, c.Need, need, c.Band)
	p("- Measured: %s: %s.", c.Measured(), verdictCell(c))
	if c.Reason != "" {
		p(" %s", oneLine(c.Reason))
	}
	p("\n")
	var each []string
	for _, s := range c.Seeds {
		x := num(float64(s.Value), c.Unit)
		if s.N > 1 {
			x += fmt.Sprintf(" (n = %d)", s.N)
		}
		if !s.Faithful {
			x += " (degraded, not counted: " + oneLine(s.Note) + ")"
		}
		each = append(each, fmt.Sprintf("seed %d: %s", s.Seed, x))
	}
	if len(each) > 0 {
		p("- Each run alone: %s.\n", strings.Join(each, "; "))
	}
	if c.Note != "" {
		p("- Note: %s\n", oneLine(c.Note))
	}
}

// seedSection is one seed's run: its variants' fidelity, metrics and
// figures.
func seedSection(b *bytes.Buffer, o *Outcome, r RunOutcome) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n### Seed %d (run %s, `%s`)\n", r.Seed, r.RunID, r.Dir)
	if r.Error != "" {
		p("\nThe run reported an error: `%s`\n", oneLine(r.Error))
	}
	var ran []VariantOutcome
	var notes, fid []string
	for _, v := range r.Variants {
		if v.Status == "ran" {
			ran = append(ran, v)
			f := v.Fidelity
			if len(v.Earlier) > 0 {
				f += fmt.Sprintf(" (run %d; before: %s)", len(v.Earlier)+1, strings.Join(v.Earlier, "; "))
			}
			fid = append(fid, fmt.Sprintf("- %s: %s", v.CC, oneLine(f)))
		}
		if v.Status != "ran" || v.Reason != "" {
			notes = append(notes, fmt.Sprintf("- %s: %s%s", v.CC, v.Status, suffix(v.Reason)))
		}
	}
	if len(notes) > 0 {
		p("\nNot run, or run without what it needs:\n\n%s\n", strings.Join(notes, "\n"))
	}
	if len(ran) == 0 {
		return
	}
	p("\nFidelity:\n\n%s\n", strings.Join(fid, "\n"))
	p("\n| metric |")
	for _, v := range ran {
		p(" %s |", v.CC)
	}
	p("\n| --- |%s\n", strings.Repeat(" ---: |", len(ran)))
	for _, m := range o.Metrics {
		p("| %s |", m.Heading())
		for _, v := range ran {
			p(" %s |", m.Format(v.Metrics.Get(m.Key)))
		}
		p("\n")
	}
	for _, v := range ran {
		for _, f := range v.Figures {
			p("\n![%s %s](%s)\n", o.Name, strings.TrimSuffix(filepath.Base(f), ".png"), f)
		}
	}
}

// HealthMarkdown is docs/results/health.md: the emulation health of every
// stored run, one row per variant. It depends on the store alone, so
// regenerating it from an unchanged store changes nothing.
func HealthMarkdown(outs []*Outcome) []byte {
	var b bytes.Buffer
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Emulation health of the reproduction runs\n\n")
	p("Generated by `cclab reproduce` from each run's run.json (stored in\n")
	p("docs/results/results.json); do not edit. One row per variant run: its\n")
	p("fidelity verdict ([fidelity.md](../fidelity.md)), the flows and how many\n")
	p("failed, the run's length, the RTT noise floor measured before the traffic\n")
	p("(TCP ping-pong between the first and last host), the share of 100 ms\n")
	p("windows with both CPUs >= 95 %% busy (a run with a high share measured the\n")
	p("machine, not the network), the loaded links and their lowest\n")
	p("achieved/configured peak rate, packets the captures dropped, and whether\n")
	p("the INT switch was active. The claims these runs judge:\n")
	p("[results.md](../results.md); how they are judged:\n")
	p("[reproduction.md](../reproduction.md).\n\n")
	p("| experiment | seed | cc | fidelity | flows (failed) | run s | RTT floor p50 / p99 (us) | CPU saturated | loaded links, lowest peak/configured | capture drops | switch |\n")
	p("| --- | ---: | --- | --- | --- | ---: | --- | ---: | --- | ---: | --- |\n")
	for _, o := range outs {
		for _, r := range o.Runs {
			for _, v := range r.Variants {
				h := v.Health
				if h == nil {
					p("| %s | %d | %s | | %s | | | | | | |\n", o.Name, r.Seed, v.CC, v.Status)
					continue
				}
				sw := "-"
				if o.Switch {
					sw = map[bool]string{true: "active", false: "**not active**"}[h.SwitchActive]
				}
				p("| %s | %d | %s | %s | %d (%d) | %.1f | %.0f / %.0f | %.0f %% | %d, %.2f | %d | %s |\n", o.Name, r.Seed, v.CC, cell(v.Fidelity), h.Flows, h.FlowsFailed,
					float64(h.DurationNs)/1e9, float64(h.RTTMedianNs)/1e3, float64(h.RTTP99Ns)/1e3, 100*h.CPUSaturated,
					h.LoadedLinks, h.MinPeakRatio, h.CaptureDrops, sw)
			}
		}
	}
	return b.Bytes()
}

func cell(s string) string { return strings.ReplaceAll(oneLine(s), "|", "\\|") }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func suffix(r string) string {
	if r == "" {
		return ""
	}
	return " (" + r + ")"
}
