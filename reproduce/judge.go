package reproduce

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"cclab/analysis/metrics"
	"cclab/analysis/stats"
)

// Verdicts of a claim (docs/reproduction.md, "How a claim is judged").
const (
	// Agrees: the claim's confidence interval lies inside its band.
	Agrees = "agrees"
	// Disagrees: the interval lies outside the band.
	Disagrees = "disagrees"
	// Inconclusive: the interval straddles an edge of the band.
	Inconclusive = "inconclusive"
	// TooFew: fewer samples than the claim's statistic needs (its n).
	TooFew = "too few"
	// NotMeasurableHere: the file says why this setup cannot measure it.
	NotMeasurableHere = "not measurable here"
	DegradedRuns      = "degraded runs" // no seed had every variant the claim reads faithful
	CouldNotRun       = "could not run"
	NotMeasurable     = "not measurable" // the runs lack a number the claim reads
)

// Sources of a claim's band.
const (
	SourcePaper   = "paper"   // the paper's own number
	SourceDerived = "derived" // a number the lab derived from the paper's words
	SourceReading = "reading" // no number: the lab's reading (a limit or a direction)
)

// bootstrapResamples is how many resamples a ratio's interval takes.
const bootstrapResamples = 2000

// SeedValue is a claim's number in one run.
type SeedValue struct {
	Seed     int64  `json:"seed"`
	Value    Value  `json:"value"`
	N        int    `json:"n,omitempty"`    // flows it was taken over (a percentile)
	Faithful bool   `json:"faithful"`       // every variant the claim reads was judged faithful
	Note     string `json:"note,omitempty"` // why not counted
}

// ClaimOutcome is a claim's verdict.
type ClaimOutcome struct {
	ID    string      `json:"id"`
	Claim string      `json:"claim"`
	Paper PaperNumber `json:"paper"`
	// Source is where the band's number comes from: paper, derived or
	// reading.
	Source string `json:"source"`
	// Check is the rule in words: what is compared, with which statistic.
	Check     string `json:"check"`
	Statistic string `json:"statistic"`
	Need      int    `json:"n_needed"`
	// Band is the range that agrees, in the claim's unit, BandEdges its
	// ends (infinite on an open side).
	Band      string   `json:"band"`
	BandEdges [2]Value `json:"band_edges"`
	// Value is the statistic over the faithful runs, CI its interval
	// (Stats.Conf), N the samples it was taken over.
	Value Value    `json:"value"`
	CI    [2]Value `json:"ci"`
	// Unbounded marks a side of CI the samples cannot bound (too few
	// flows for the order statistic, too few runs for a spread), as
	// opposed to a bound that is a censored time (never).
	Unbounded [2]bool     `json:"ci_unbounded,omitempty"`
	N         int         `json:"n"`
	Unit      string      `json:"unit,omitempty"`
	Seeds     []SeedValue `json:"seeds,omitempty"`
	Verdict   string      `json:"verdict"`
	// DirectionHolds is set on a disagreeing ratio whose interval is on
	// the paper's side of 1: the size is off, not the direction.
	DirectionHolds bool   `json:"direction_holds,omitempty"`
	Reason         string `json:"reason,omitempty"`
	Note           string `json:"note,omitempty"`
	Line           int    `json:"line,omitempty"`
}

// source is where the claim's band comes from.
func (c ClaimSpec) source() string {
	switch {
	case c.Paper.Value == nil:
		return SourceReading
	case c.Paper.Derived:
		return SourceDerived
	}
	return SourcePaper
}

// rule describes what is compared.
func (c ClaimSpec) rule() string {
	st := c.Statistic
	if v := c.Value; v != nil {
		return fmt.Sprintf("%s of %s's %s", st, v.CC, v.Metric)
	}
	r := c.Ratio
	if p, _ := parseStatistic(st); p.kind == "mean" {
		return fmt.Sprintf("%s / %s of %s, geometric mean over the runs", r.A, r.B, r.Metric)
	}
	return fmt.Sprintf("%s of %s / %s of %s", st, r.Metric, st, r.Metric)
}

func (c ClaimSpec) ccs() []string {
	if c.Value != nil {
		return []string{c.Value.CC}
	}
	return []string{c.Ratio.A, c.Ratio.B}
}

func (c ClaimSpec) metric() string {
	if c.Value != nil {
		return c.Value.Metric
	}
	return c.Ratio.Metric
}

func (c ClaimSpec) unit(e *Experiment) string {
	if c.Value != nil {
		u, _ := e.measure.Unit(c.Value.Metric)
		return u
	}
	return ""
}

// seedData is what one run gives a claim: per variant the per-flow
// samples or the per-run metric.
type seedData struct {
	seed     int64
	faithful bool
	note     string
	samples  map[string][]Sample
	values   map[string]float64
}

// judge evaluates every claim of the experiment on its runs.
func judge(e *Experiment, o *Outcome) {
	o.Claims = nil
	o.PostHoc = e.PostHoc
	for _, c := range e.Claims {
		o.Claims = append(o.Claims, judgeClaim(e, c, o))
	}
}

func judgeClaim(e *Experiment, c ClaimSpec, o *Outcome) ClaimOutcome {
	st, _ := parseStatistic(c.Statistic)
	b, _ := c.band()
	unit := c.unit(e)
	co := ClaimOutcome{ID: c.ID, Claim: c.Claim, Paper: c.Paper, Source: c.source(), Check: c.rule(),
		Statistic: st.String(), Need: c.N, Band: b.describe(unit), BandEdges: [2]Value{Value(b.lo), Value(b.hi)}, Note: c.Note, Unit: unit, Line: c.line,
		Value: Value(math.NaN()), CI: [2]Value{Value(math.NaN()), Value(math.NaN())}}
	var data []seedData
	var why []string
	perFlow := e.measure.PerFlow(c.metric())
	for _, r := range o.Runs {
		d := seedData{seed: r.Seed, faithful: true, samples: map[string][]Sample{}, values: map[string]float64{}}
		ok := true
		for _, cc := range c.ccs() {
			v := r.variant(cc)
			switch {
			case v == nil && r.Error != "":
				why, ok = append(why, fmt.Sprintf("seed %d did not run: %s", r.Seed, r.Error)), false
			case v == nil:
				why, ok = append(why, fmt.Sprintf("seed %d: %s did not run", r.Seed, cc)), false
			case v.Status != "ran":
				why, ok = append(why, fmt.Sprintf("seed %d: %s: %s %s", r.Seed, cc, v.Status, v.Reason)), false
			case v.Reason != "":
				why, ok = append(why, fmt.Sprintf("seed %d: %s: %s", r.Seed, cc, v.Reason)), false
			default:
				d.samples[cc] = v.Samples[c.metric()]
				d.values[cc] = v.Metrics.Get(c.metric())
				if v.Fidelity != "faithful" {
					d.faithful = false
					d.note = strings.TrimSpace(d.note + " " + cc + " " + v.Fidelity)
				}
			}
		}
		if ok {
			data = append(data, d)
		}
	}
	var faithful []seedData
	for _, d := range data {
		x, n := seedNumber(c, st, d, perFlow)
		co.Seeds = append(co.Seeds, SeedValue{Seed: d.seed, Value: Value(x), N: n, Faithful: d.faithful, Note: d.note})
		if d.faithful {
			faithful = append(faithful, d)
		}
	}
	switch {
	case len(data) == 0:
		co.Verdict, co.Reason = CouldNotRun, strings.Join(why, "; ")
		return co
	case len(faithful) == 0:
		co.Verdict, co.Reason = DegradedRuns, "no run of the variants it reads was judged faithful"
		return co
	}
	est, ci, n, err := pooled(c, st, faithful, perFlow)
	co.Value, co.CI, co.N = Value(est), [2]Value{Value(ci.Lo), Value(ci.Hi)}, n
	co.Unbounded = [2]bool{ci.NoLower, ci.NoUpper}
	if len(why) > 0 {
		co.Reason = "not counted: " + strings.Join(why, "; ")
	}
	var dr droppedRuns
	if errors.As(err, &dr) {
		co.Reason, err = strings.TrimSpace(co.Reason+" "+dr.Error()), nil
	}
	if err == nil && math.IsNaN(est) {
		err = errors.New("the statistic is not defined on these runs (a never against a never, or nothing against nothing)")
	}
	switch {
	case c.NotMeasurable != "":
		co.Verdict, co.Reason = NotMeasurableHere, c.NotMeasurable
	case err != nil:
		co.Verdict, co.Reason = NotMeasurable, strings.TrimSpace(err.Error()+". "+co.Reason)
	case n < c.N:
		co.Verdict = TooFew
	default:
		co.Verdict = b.judge(ci)
		if co.Verdict == Disagrees && c.Ratio != nil {
			side := band{lo: math.Inf(-1), hi: 1, hiOpen: true}
			if c.Ratio.Direction == "above" {
				side = band{lo: 1, loOpen: true, hi: math.Inf(1)}
			}
			co.DirectionHolds = side.judge(ci) == Agrees
		}
	}
	return co
}

// seedNumber is the claim's statistic on one run alone (the page's
// per-seed detail), with the flows it was taken over.
func seedNumber(c ClaimSpec, st statistic, d seedData, perFlow bool) (float64, int) {
	one := func(cc string) (float64, int) {
		if !perFlow {
			return d.values[cc], 1
		}
		x, _, n := stats.Percentile(values(d.samples[cc]), st.p, stats.Conf)
		return x, n
	}
	if c.Value != nil {
		return one(c.Value.CC)
	}
	if !perFlow {
		return stats.Ratio(d.values[c.Ratio.A], d.values[c.Ratio.B]), 1
	}
	// The flows both laws ran, as the pooled ratio pairs them.
	p := pairFlows(d.samples[c.Ratio.A], d.samples[c.Ratio.B])
	slices.Sort(p.A)
	slices.Sort(p.B)
	return stats.Ratio(metrics.Percentile(p.A, st.p), metrics.Percentile(p.B, st.p)), len(p.A)
}

// pooled is the claim's statistic over the faithful runs, its interval
// and the samples it was taken over.
func pooled(c ClaimSpec, st statistic, runs []seedData, perFlow bool) (float64, stats.Interval, int, error) {
	none := stats.Interval{Lo: math.NaN(), Hi: math.NaN()}
	if c.Value != nil {
		cc := c.Value.CC
		if perFlow {
			var groups [][]float64
			for _, d := range runs {
				groups = append(groups, values(d.samples[cc]))
			}
			x, ci, n := stats.Percentile(stats.Pool(groups...), st.p, stats.Conf)
			if n == 0 {
				return x, none, 0, noSamples(runs, c.metric(), cc)
			}
			return x, ci, n, nil
		}
		var xs []float64
		var obs []stats.Obs
		for _, d := range runs {
			x := d.values[cc]
			if math.IsNaN(x) {
				continue
			}
			xs = append(xs, x)
			obs = append(obs, stats.Obs{T: x, Event: !math.IsInf(x, 1)})
		}
		if len(xs) == 0 {
			return math.NaN(), none, 0, fmt.Errorf("the runs lack %s of %s", c.metric(), cc)
		}
		if st.kind == "median" {
			x, ci, n := stats.MedianCensoredCI(obs, stats.Conf)
			return x, ci, n, nil
		}
		if slices.ContainsFunc(xs, func(x float64) bool { return math.IsInf(x, 0) }) {
			return math.NaN(), none, len(xs), fmt.Errorf("a run never reached it: a mean needs every run's number")
		}
		x, ci, n := stats.MeanCI(xs, stats.Conf)
		return x, ci, n, nil
	}
	a, b := c.Ratio.A, c.Ratio.B
	if perFlow {
		var seeds []stats.Paired
		n := 0
		for _, d := range runs {
			p := pairFlows(d.samples[a], d.samples[b])
			n += len(p.A)
			if len(p.A) > 0 {
				seeds = append(seeds, p)
			}
		}
		if n == 0 {
			if err := noSamples(runs, c.metric(), a); err != nil {
				return math.NaN(), none, 0, err
			}
			return math.NaN(), none, 0, fmt.Errorf("no flow of %s and %s was measured in both", a, b)
		}
		pct := func(s []float64) float64 { return metrics.Percentile(s, st.p) }
		x, ci := stats.RatioCI(seeds, pct, bootstrapResamples, 1, stats.Conf)
		return x, ci, n, nil
	}
	if st.kind == "median" {
		var seeds []stats.Paired
		for _, d := range runs {
			x, y := d.values[a], d.values[b]
			if !math.IsNaN(x) && !math.IsNaN(y) {
				seeds = append(seeds, stats.Paired{A: []float64{x}, B: []float64{y}})
			}
		}
		if len(seeds) == 0 {
			return math.NaN(), none, 0, fmt.Errorf("the runs lack %s of %s or %s", c.metric(), a, b)
		}
		med := func(s []float64) float64 { return metrics.Percentile(s, 50) }
		x, ci := stats.RatioCI(seeds, med, bootstrapResamples, 1, stats.Conf)
		return x, ci, len(seeds), nil
	}
	// mean: the geometric mean of the runs' paired ratios, its interval
	// from Student's t on their logarithms.
	var logs []float64
	var dropped []string
	for _, d := range runs {
		r := stats.Ratio(d.values[a], d.values[b])
		if math.IsNaN(r) {
			dropped = append(dropped, fmt.Sprintf("seed %d (%s / %s undefined)", d.seed, num(d.values[a], ""), num(d.values[b], "")))
			continue
		}
		if r <= 0 || math.IsInf(r, 0) {
			return math.NaN(), none, len(runs), fmt.Errorf("a run's ratio is %s: a geometric mean needs finite, positive ratios", num(r, ""))
		}
		logs = append(logs, math.Log(r))
	}
	if len(logs) == 0 {
		return math.NaN(), none, 0, fmt.Errorf("the runs lack %s of %s or %s", c.metric(), a, b)
	}
	m, ci, n := stats.MeanCI(logs, stats.Conf)
	ci.Lo, ci.Hi = math.Exp(ci.Lo), math.Exp(ci.Hi)
	if len(dropped) > 0 {
		// Not an error: said beside the number.
		return math.Exp(m), ci, n, droppedRuns(dropped)
	}
	return math.Exp(m), ci, n, nil
}

// droppedRuns is not an error of the claim: pooled's caller shows it as a
// note (a run whose ratio is undefined is left out of a geometric mean).
type droppedRuns []string

func (d droppedRuns) Error() string { return "left out: " + strings.Join(d, ", ") }

// noSamples says why a per-flow claim has nothing to pool: a store made
// before per-flow samples were kept needs the experiment run again.
func noSamples(runs []seedData, metric, cc string) error {
	for _, d := range runs {
		if len(d.samples[cc]) > 0 {
			return nil
		}
	}
	return fmt.Errorf("the stored runs hold no per-flow %s of %s (made before per-flow samples were kept, or no such flows): run the experiment again", metric, cc)
}

// pairFlows lines up two variants' samples of one run by flow id: the
// same arrival and size in both. A flow either lacks is left out of both.
func pairFlows(a, b []Sample) stats.Paired {
	byID := make(map[string]float64, len(b))
	for _, s := range b {
		byID[s.Flow] = s.V
	}
	var p stats.Paired
	for _, s := range a {
		if y, ok := byID[s.Flow]; ok && !math.IsNaN(s.V) && !math.IsNaN(y) {
			p.A, p.B = append(p.A, s.V), append(p.B, y)
		}
	}
	return p
}
