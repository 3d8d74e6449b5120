package reproduce

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"cclab/analysis/report"
	"cclab/analysis/stats"
	"cclab/internal/units"
	"cclab/orchestrator/experiment"
)

// Spec is the `reproduce:` block of an experiment file in
// experiments/reproduce/: which paper figure the file stands for, how its
// runs are measured and the paper's claims with the paper's own numbers.
// docs/reproduction.md describes every key.
type Spec struct {
	Title string `yaml:"title"`
	Paper string `yaml:"paper"` // the paper, section and figure
	// Order places the experiment in `cclab reproduce all`; 0 keeps it
	// out (the smoke experiment).
	Order   int    `yaml:"order"`
	Measure string `yaml:"measure"` // one of analysis/report's measures (measures.go)
	Group   string `yaml:"group"`   // the workload entry the measure looks at, where it takes one
	// Seeds are the workload seeds the experiment runs with, one run
	// each; empty: the file's seed only.
	Seeds   []int64  `yaml:"seeds"`
	Figures []string `yaml:"figures"` // analysis figures (file stems) shown per variant
	// Analysis overrides the analysis' defaults for this experiment
	// (cclab analyze --window, --fair, --hold).
	Analysis Analysis `yaml:"analysis"`
	// Unscaled says the runs are at the paper's own rates and delays, so
	// times compare with the paper's directly (the QCN paper's 1 Gbit/s
	// testbed); otherwise a paper's figure may not be compared with a
	// metric in milliseconds.
	Unscaled bool        `yaml:"unscaled"`
	Claims   []ClaimSpec `yaml:"claims"`
	// PostHoc lists the setup choices made after a result was seen.
	PostHoc []PostHoc `yaml:"posthoc"`
}

// Analysis is how the runs are analysed.
type Analysis struct {
	Window units.Duration `yaml:"window"` // throughput and fairness window (default 1 ms)
	Fair   float64        `yaml:"fair"`   // Jain index counted as fair (default 0.95)
	Hold   units.Duration `yaml:"hold"`   // how long it must stay fair (default 10 ms)
}

// ClaimSpec is one claim of a paper and how it is checked: either a value
// of one variant (Value) or the ratio of two variants' values (Ratio),
// through a statistic over the runs judged faithful, with a confidence
// interval, against a band (docs/reproduction.md, "How a claim is
// judged"). Statistic, N and Band are fixed in the file before the runs.
type ClaimSpec struct {
	ID    string      `yaml:"id"`
	Claim string      `yaml:"claim"` // the paper's claim in prose
	Paper PaperNumber `yaml:"paper"`
	// Statistic: a percentile over the pooled flows of every faithful run
	// (p50, p90, p95, p99, p99.9; the metric is a per-flow one), or the
	// mean or the median over the faithful runs (a per-run metric).
	Statistic string `yaml:"statistic"`
	// N is the fewest samples (flows for a percentile, runs otherwise)
	// the statistic needs; below it the claim is "too few".
	N int `yaml:"n"`
	// Band is how the interval is held against the paper: improvement,
	// factor2, limit or direction (bands.go).
	Band  string      `yaml:"band"`
	Value *ValueCheck `yaml:"value"`
	Ratio *RatioCheck `yaml:"ratio"`
	// NotMeasurable says why this machine's setup cannot measure the
	// claim (the check would pass or fail for every law); the claim is
	// listed, not judged.
	NotMeasurable string `yaml:"not_measurable"`
	// Note is what to bear in mind when reading the verdict (a difference
	// of setup, a scaling effect); printed with it.
	Note string `yaml:"note"`
	line int    // in the file, for errors
}

// PaperNumber is the number a claim rests on, as the paper gives it.
type PaperNumber struct {
	// Value is the paper's figure in the unit of the check: the metric's
	// unit for a value, a/b for a ratio. Absent when the paper states no
	// number for the claim (Reading then says what it states).
	Value *float64 `yaml:"value"`
	// Upper: the paper states a range, Value to Upper (band range).
	Upper *float64 `yaml:"upper"`
	// Derived: Value is the lab's derivation from the paper's words, not
	// a figure the paper states (Reading says how); counted apart.
	Derived bool `yaml:"derived"`
	// Statistic is the paper's own statistic (required for a percentile
	// claim, "unstated" where the paper names none): where the claim's
	// differs (p99.9 read here as p95 for want of flows) the page says so,
	// and the sweeps take the paper's.
	Statistic string `yaml:"statistic"`
	Where     string `yaml:"where"` // section and figure
	Quote     string `yaml:"quote"` // the paper's words
	// Reading is how Value follows from the quote (e.g. "9 % better:
	// 0.91"), or, without a Value, how the lab reads the claim.
	Reading string `yaml:"reading"`
}

// PostHoc is a setup choice made after a result of the experiment had
// been seen: listed on the page beside the claims, with its commit and
// reason.
type PostHoc struct {
	Setting string `yaml:"setting" json:"setting"`
	Commit  string `yaml:"commit" json:"commit"`
	Reason  string `yaml:"reason" json:"reason"`
}

// ValueCheck compares one variant's metric with the paper's figure.
type ValueCheck struct {
	CC     string `yaml:"cc"`
	Metric string `yaml:"metric"`
	// Bound: at_most (the claim is an upper bound: agrees up to twice the
	// paper's figure), at_least (down to half of it) or about (within a
	// factor of 2 either way).
	Bound string `yaml:"bound"`
	// Limit is the lab's own bound for a claim whose paper states no
	// number: then only the direction is checked.
	Limit *float64 `yaml:"limit"`
}

// RatioCheck compares two variants: metric of A / metric of B.
type RatioCheck struct {
	A      string `yaml:"a"`
	B      string `yaml:"b"`
	Metric string `yaml:"metric"`
	// Direction is below (A's metric is the smaller) or above. With a
	// paper figure it must agree with it.
	Direction string `yaml:"direction"`
}

// An Experiment is one file of the suite.
type Experiment struct {
	Name    string // the file's stem
	File    string // experiments/reproduce/<file>, relative to the repository
	Compare []string
	Spec
	Metrics []Metric
	measure report.Measure
}

// Dir is where the suite's files are, under the repository.
var Dir = filepath.Join("experiments", "reproduce")

// Load reads every experiment file of the suite under root that has a
// `reproduce:` block, checks its claims against its measure and its
// compared congestion controls, and orders them by Order.
func Load(root string) ([]*Experiment, error) {
	paths, err := filepath.Glob(filepath.Join(root, Dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var out []*Experiment
	var errs []error
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		x, err := experiment.Parse(p, src)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if x.Reproduce.Kind == 0 {
			continue
		}
		e, err := fromExperiment(x, filepath.Base(p))
		if err != nil {
			errs = append(errs, prefixLines(p, err))
			continue
		}
		out = append(out, e)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b *Experiment) int {
		if a.Order != b.Order {
			return a.Order - b.Order
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

func fromExperiment(x *experiment.Experiment, file string) (*Experiment, error) {
	e := &Experiment{Name: strings.TrimSuffix(file, ".yaml"), File: filepath.Join(Dir, file), Compare: x.Compare}
	if len(e.Compare) == 0 {
		e.Compare = []string{x.CC}
	}
	if err := decodeStrict(&x.Reproduce, &e.Spec); err != nil {
		// The decoder's own "line N" counts in the re-encoded block: left out.
		msg := strings.TrimSpace(decoderLine.ReplaceAllString(err.Error(), ""))
		return nil, fmt.Errorf("line %d: reproduce: %s", strictErrorLine(&x.Reproduce, err), msg)
	}
	if len(e.Seeds) == 0 {
		e.Seeds = []int64{x.Seed}
	}
	m, ok := report.LookupMeasure(e.Measure)
	if !ok {
		return nil, fmt.Errorf("reproduce: measure %q is not one of %v", e.Measure, report.MeasureNames())
	}
	e.measure, e.Metrics = m, m.Metrics
	if e.Title == "" || e.Paper == "" || len(e.Claims) == 0 {
		return nil, fmt.Errorf("reproduce: title, paper and claims are required")
	}
	lines := claimLines(&x.Reproduce)
	ids := map[string]bool{}
	var errs []error
	for i := range e.Claims {
		c := &e.Claims[i]
		if i < len(lines) {
			c.line = lines[i]
		}
		if ids[c.ID] {
			errs = append(errs, fmt.Errorf("line %d: claim %q: id used twice", c.line, c.ID))
		}
		ids[c.ID] = true
		if err := c.check(e); err != nil {
			errs = append(errs, fmt.Errorf("line %d: claim %q: %w", c.line, c.ID, err))
		}
	}
	for i, ph := range e.PostHoc {
		if ph.Setting == "" || ph.Commit == "" || ph.Reason == "" {
			errs = append(errs, fmt.Errorf("line %d: reproduce: posthoc entry %d: setting, commit and reason are required", x.Reproduce.Line, i+1))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return e, nil
}

// decoderLine is yaml's position prefix in a decoding error.
var decoderLine = regexp.MustCompile(`(yaml: unmarshal errors:\s*)?line \d+(:\d+)?: `)

// unknownField finds the field a strict decoding refused.
var unknownField = regexp.MustCompile(`field (\S+) not found`)

// strictErrorLine is the line in the file of the first key a strict
// decoding refused (the decoder's own lines are of the re-encoded block),
// else the block's.
func strictErrorLine(n *yaml.Node, err error) int {
	m := unknownField.FindStringSubmatch(err.Error())
	if m == nil {
		return n.Line
	}
	var find func(*yaml.Node) int
	find = func(n *yaml.Node) int {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == m[1] {
					return n.Content[i].Line
				}
			}
		}
		for _, c := range n.Content {
			if l := find(c); l > 0 {
				return l
			}
		}
		return 0
	}
	if l := find(n); l > 0 {
		return l
	}
	return n.Line
}

// claimLines are the lines of the claims' entries in the reproduce block.
func claimLines(n *yaml.Node) []int {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "claims" {
			var out []int
			for _, c := range n.Content[i+1].Content {
				out = append(out, c.Line)
			}
			return out
		}
	}
	return nil
}

// decodeStrict decodes the block refusing unknown keys (a misspelt key
// would otherwise silently drop a claim's bound); yaml.Node.Decode has no
// such mode, so the node goes through a strict decoder.
func decodeStrict(n *yaml.Node, out *Spec) error {
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	return dec.Decode(out)
}

// timeUnits are metrics in absolute time: their values change with the
// time scale (docs/scaling.md), so a paper's figure cannot be compared
// with them; claims read times in base RTTs.
var timeUnits = []string{"ms"}

func (c ClaimSpec) check(e *Experiment) error {
	if c.Claim == "" || c.Paper.Where == "" || c.Paper.Quote == "" {
		return fmt.Errorf("claim, paper.where and paper.quote are required")
	}
	ccOK := func(cc string) error {
		if !slices.Contains(e.Compare, cc) {
			return fmt.Errorf("%q is not compared by the file (compare: %v)", cc, e.Compare)
		}
		return nil
	}
	if c.Paper.Statistic != "" && c.Paper.Statistic != "unstated" {
		if _, err := parseStatistic(c.Paper.Statistic); err != nil {
			return fmt.Errorf("paper.statistic: %w (or unstated)", err)
		}
	}
	var metric string
	switch {
	case (c.Value == nil) == (c.Ratio == nil):
		return fmt.Errorf("give exactly one of value and ratio")
	case c.Value != nil:
		v := c.Value
		metric = v.Metric
		if err := ccOK(v.CC); err != nil {
			return err
		}
		unit, err := e.measure.Unit(v.Metric)
		if err != nil {
			return err
		}
		if !slices.Contains([]string{"at_most", "at_least", "about"}, v.Bound) {
			return fmt.Errorf("value.bound %q: at_most, at_least or about", v.Bound)
		}
		switch {
		case c.Paper.Value != nil && v.Limit != nil:
			return fmt.Errorf("value.limit is for claims whose paper states no number; this one has paper.value")
		case c.Paper.Value == nil && v.Limit == nil:
			return fmt.Errorf("the paper states no number (no paper.value): give value.limit, the lab's reading")
		case c.Paper.Value == nil && v.Bound == "about":
			return fmt.Errorf("bound about needs the paper's number")
		case c.Paper.Value != nil && slices.Contains(timeUnits, unit) && !e.Unscaled:
			return fmt.Errorf("metric %s is in %s, which the time scale changes: compare with the paper in base RTTs", v.Metric, unit)
		case c.Paper.Value != nil && *c.Paper.Value <= 0 && v.Bound != "at_least":
			return fmt.Errorf("paper.value %v: a factor of 2 of it needs a positive figure", *c.Paper.Value)
		}
	default:
		r := c.Ratio
		metric = r.Metric
		for _, cc := range []string{r.A, r.B} {
			if err := ccOK(cc); err != nil {
				return err
			}
		}
		if _, err := e.measure.Unit(r.Metric); err != nil {
			return err
		}
		if r.Direction != "below" && r.Direction != "above" {
			return fmt.Errorf("ratio.direction %q: below or above", r.Direction)
		}
		if p := c.Paper.Value; p != nil && (*p <= 0 || (*p < 1) != (r.Direction == "below") || *p == 1) {
			return fmt.Errorf("paper.value %v (a/b) does not point %s", *p, r.Direction)
		}
	}
	if err := c.checkStatistic(e, metric); err != nil {
		return err
	}
	_, err := c.band()
	return err
}

// checkStatistic refuses a claim without its statistic and n, a
// statistic that does not fit the metric (a percentile of a per-run
// number), and an n below what the statistic needs.
func (c ClaimSpec) checkStatistic(e *Experiment, metric string) error {
	if c.Statistic == "" || c.N == 0 {
		return fmt.Errorf("statistic and n are required (a percentile over the pooled flows, p50-p99.9, or mean or median over the runs; n: the samples it needs)")
	}
	st, err := parseStatistic(c.Statistic)
	if err != nil {
		return fmt.Errorf("statistic: %w", err)
	}
	perFlow := e.measure.PerFlow(metric)
	switch {
	case st.percentile() && !perFlow:
		return fmt.Errorf("statistic %s is a percentile over flows, but %s is one number per run: use mean or median", c.Statistic, metric)
	case !st.percentile() && perFlow:
		return fmt.Errorf("statistic %s is over runs, but %s is one number per flow: use a percentile (p50 ... p99.9)", c.Statistic, metric)
	}
	if need := st.minN(); c.N < need {
		return fmt.Errorf("n %d: %s needs at least %d %s", c.N, c.Statistic, need, st.unitOfN())
	}
	if !st.percentile() && c.N > len(e.Seeds) {
		return fmt.Errorf("n %d: the file runs %d seeds, so the claim could only ever be too few", c.N, len(e.Seeds))
	}
	if st.percentile() && c.Paper.Statistic == "" {
		return fmt.Errorf("paper.statistic is required for a percentile (the paper's own, e.g. p99.9, even where the claim reads another)")
	}
	// A percentile of one law is bounded on a side only from so many
	// flows: below them a band with an edge on that side could never be
	// met, whatever the flows.
	if b, err := c.band(); err == nil && st.percentile() && c.Value != nil {
		lower, upper := stats.BoundedFrom(st.p, stats.Conf)
		if !math.IsInf(b.hi, 1) && c.N < upper {
			return fmt.Errorf("n %d: a %s is bounded above only from %d flows, and the band has an upper edge", c.N, c.Statistic, upper)
		}
		if !math.IsInf(b.lo, -1) && c.N < lower {
			return fmt.Errorf("n %d: a %s is bounded below only from %d flows, and the band has a lower edge", c.N, c.Statistic, lower)
		}
	}
	return nil
}

// Find returns the named experiments ("all": every one with an order).
func Find(root string, names []string) ([]*Experiment, error) {
	all, err := Load(root)
	if err != nil {
		return nil, err
	}
	if len(names) == 1 && names[0] == "all" {
		var out []*Experiment
		for _, e := range all {
			if e.Order > 0 {
				out = append(out, e)
			}
		}
		return out, nil
	}
	var out []*Experiment
	for _, n := range names {
		i := slices.IndexFunc(all, func(e *Experiment) bool { return e.Name == n })
		if i < 0 {
			var have []string
			for _, e := range all {
				have = append(have, e.Name)
			}
			return nil, fmt.Errorf("no reproduction experiment %q (have: all, %s)", n, strings.Join(have, ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}

// prefixLines names the file before each of err's "line N: ..." parts, so
// every error reads file:line.
func prefixLines(path string, err error) error {
	var parts []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if strings.HasPrefix(l, "line ") {
			l = path + ":" + strings.TrimPrefix(l, "line ")
		} else {
			l = path + ": " + l
		}
		parts = append(parts, l)
	}
	return errors.New(strings.Join(parts, "\n"))
}
