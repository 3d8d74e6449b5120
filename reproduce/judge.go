package reproduce

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Verdicts of a claim.
const (
	// Agrees: direction and magnitude (within a factor of 2 of the
	// paper's figure) on the median of the faithful seeds.
	Agrees = "agrees"
	// AgreesDirection: the paper states no number; the direction holds
	// against the lab's reading (ValueCheck.Limit, RatioCheck.Direction).
	AgreesDirection = "agrees in direction"
	// Magnitude: the direction holds, the size is off by more than 2x.
	Magnitude     = "disagrees in magnitude"
	Disagrees     = "disagrees"
	DegradedRuns  = "degraded runs" // no seed had every variant the claim reads faithful
	CouldNotRun   = "could not run"
	NotMeasurable = "not measurable"
)

// agreeing reports whether a verdict counts as agreeing.
func agreeing(v string) bool { return v == Agrees || v == AgreesDirection }

// SeedValue is a claim's number in one run.
type SeedValue struct {
	Seed     int64  `json:"seed"`
	Value    Value  `json:"value"`
	Faithful bool   `json:"faithful"` // every variant the claim reads was judged faithful
	Verdict  string `json:"verdict"`
}

// ClaimOutcome is a claim's verdict.
type ClaimOutcome struct {
	ID    string      `json:"id"`
	Claim string      `json:"claim"`
	Paper PaperNumber `json:"paper"`
	// Check is the rule in words ("hpcc drain_rtts at most 2 x 1 base
	// RTTs").
	Check    string      `json:"check"`
	Measured string      `json:"measured,omitempty"`
	Value    Value       `json:"value"` // the median over the faithful seeds (NaN: none)
	Seeds    []SeedValue `json:"seeds,omitempty"`
	Verdict  string      `json:"verdict"`
	// Flips is set when the seeds' own verdicts differ.
	Flips  bool   `json:"flips,omitempty"`
	Reason string `json:"reason,omitempty"`
	Note   string `json:"note,omitempty"`
	// Samples is set when the claim reads a tail percentile over fewer
	// flows than the percentile needs: it says how few, and that each
	// number is then the slowest flow's.
	Samples string `json:"samples,omitempty"`
}

// rule describes the check in words.
func (c ClaimSpec) rule(unit string) string {
	p := c.Paper.Value
	if v := c.Value; v != nil {
		words := map[string]string{"at_most": "at most", "at_least": "at least", "about": "about"}[v.Bound]
		if p == nil {
			return fmt.Sprintf("%s of %s %s %s (the lab's reading; the paper gives no number)", v.Metric, v.CC, words, num(*v.Limit, unit))
		}
		switch v.Bound {
		case "at_most":
			return fmt.Sprintf("%s of %s at most 2 x the paper's %s", v.Metric, v.CC, num(*p, unit))
		case "at_least":
			return fmt.Sprintf("%s of %s at least half the paper's %s", v.Metric, v.CC, num(*p, unit))
		}
		return fmt.Sprintf("%s of %s within 2x of the paper's %s", v.Metric, v.CC, num(*p, unit))
	}
	r := c.Ratio
	dir := map[string]string{"below": "< 1", "above": "> 1"}[r.Direction]
	if p == nil {
		return fmt.Sprintf("%s: %s / %s %s (the paper gives no number)", r.Metric, r.A, r.B, dir)
	}
	return fmt.Sprintf("%s: %s / %s %s and within 2x of the paper's %s", r.Metric, r.A, r.B, dir, f2(*p))
}

// evaluate gives one number's verdict.
func (c ClaimSpec) evaluate(x float64) string {
	if math.IsNaN(x) {
		return NotMeasurable
	}
	p := c.Paper.Value
	if v := c.Value; v != nil {
		if p == nil {
			ok := (v.Bound == "at_most" && x <= *v.Limit) || (v.Bound == "at_least" && x >= *v.Limit)
			return map[bool]string{true: AgreesDirection, false: Disagrees}[ok]
		}
		lo, hi := *p/2, *p*2
		switch v.Bound {
		case "at_most":
			lo = math.Inf(-1)
		case "at_least":
			hi = math.Inf(1)
		}
		return map[bool]string{true: Agrees, false: Disagrees}[x >= lo && x <= hi]
	}
	r := c.Ratio
	right := (r.Direction == "below" && x < 1) || (r.Direction == "above" && x > 1)
	switch {
	case !right:
		return Disagrees
	case p == nil:
		return AgreesDirection
	case x >= *p/2 && x <= *p*2:
		return Agrees
	}
	return Magnitude
}

// number is the claim's number in one run: the variant's metric or the
// ratio of two.
func (c ClaimSpec) number(m map[string]Metrics) float64 {
	if v := c.Value; v != nil {
		return m[v.CC].Get(v.Metric)
	}
	a, b := m[c.Ratio.A].Get(c.Ratio.Metric), m[c.Ratio.B].Get(c.Ratio.Metric)
	if b == 0 || math.IsInf(a, 0) || math.IsInf(b, 0) {
		// A ratio with a never (+Inf) or a zero is unmeasurable as a
		// number; a finite against a never is still a direction.
		switch {
		case math.IsInf(b, 1) && !math.IsInf(a, 0):
			return 0
		case math.IsInf(a, 1) && !math.IsInf(b, 0):
			return math.Inf(1)
		}
		return math.NaN()
	}
	return a / b
}

// ccs are the variants the claim reads.
func (c ClaimSpec) ccs() []string {
	if c.Value != nil {
		return []string{c.Value.CC}
	}
	return []string{c.Ratio.A, c.Ratio.B}
}

func (c ClaimSpec) unit(e *Experiment) string {
	if c.Value != nil {
		u, _ := e.measure.unit(c.Value.Metric)
		return u
	}
	return ""
}

// judge evaluates every claim of the experiment on its runs: each seed's
// number, then the verdict on the median of the seeds whose variants were
// all judged faithful.
func judge(e *Experiment, o *Outcome) {
	o.Claims = nil
	for _, c := range e.Claims {
		unit := c.unit(e)
		co := ClaimOutcome{ID: c.ID, Claim: c.Claim, Paper: c.Paper, Check: c.rule(unit), Note: c.Note, Value: Value(math.NaN())}
		var faithful []float64
		var why []string
		for _, r := range o.Runs {
			m := map[string]Metrics{}
			ok, allFaithful := true, true
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
					m[cc] = v.Metrics
					if v.Fidelity != "faithful" {
						allFaithful = false
						why = append(why, fmt.Sprintf("seed %d: %s %s", r.Seed, cc, v.Fidelity))
					}
				}
			}
			if !ok {
				continue
			}
			x := c.number(m)
			sv := SeedValue{Seed: r.Seed, Value: Value(x), Faithful: allFaithful, Verdict: c.evaluate(x)}
			co.Seeds = append(co.Seeds, sv)
			if allFaithful && !math.IsNaN(x) {
				faithful = append(faithful, x)
			}
		}
		var all []string
		for _, s := range co.Seeds {
			all = append(all, s.Verdict)
		}
		co.Flips = len(slices.Compact(slices.Sorted(slices.Values(all)))) > 1
		switch {
		case len(co.Seeds) == 0:
			co.Verdict, co.Reason = CouldNotRun, strings.Join(why, "; ")
		case len(faithful) == 0 && anyMeasured(co.Seeds):
			co.Verdict, co.Reason = DegradedRuns, strings.Join(why, "; ")
		case len(faithful) == 0:
			co.Verdict, co.Reason = NotMeasurable, "a number the claim reads is missing from the runs"
		default:
			co.Value = Value(median(faithful))
			co.Verdict = c.evaluate(float64(co.Value))
			if len(why) > 0 {
				co.Reason = "not counted: " + strings.Join(why, "; ")
			}
		}
		co.Measured = measured(c, co, unit)
		co.Samples = sampleNote(c, o)
		o.Claims = append(o.Claims, co)
	}
}

// tailCounts maps a tail-percentile metric to the metric counting the
// flows it is taken over, and the fewest flows for which the percentile
// is not simply the largest (nearest rank: p99.9 of n < 1000 is the
// maximum).
var tailCounts = map[string]struct {
	count string
	need  int
}{
	"short_p999":  {"short_n", 1000},
	"medium_p999": {"medium_n", 1000},
	"long_p999":   {"long_n", 1000},
}

// sampleNote says, for a claim on a tail percentile, over how few flows
// its runs took it when that is fewer than the percentile needs; "" when
// enough, or when the claim reads no such metric.
func sampleNote(c ClaimSpec, o *Outcome) string {
	tc, ok := tailCounts[c.metric()]
	if !ok {
		return ""
	}
	lo, hi := math.MaxInt, 0
	for _, r := range o.Runs {
		for _, cc := range c.ccs() {
			v := r.variant(cc)
			if v == nil || v.Status != "ran" {
				continue
			}
			if n := v.Metrics.Get(tc.count); !math.IsNaN(n) {
				lo, hi = min(lo, int(n)), max(hi, int(n))
			}
		}
	}
	if hi == 0 || hi >= tc.need {
		return ""
	}
	span := strconv.Itoa(lo)
	if hi > lo {
		span += "-" + strconv.Itoa(hi)
	}
	return fmt.Sprintf("Sample size: %s is taken over %s flows per variant and seed; below %d flows it is the slowest flow's slowdown, so one flow decides each number.",
		c.metric(), span, tc.need)
}

func anyMeasured(ss []SeedValue) bool {
	return slices.ContainsFunc(ss, func(s SeedValue) bool { return !math.IsNaN(float64(s.Value)) })
}

// measured says what the runs gave: the median, the seeds' spread and
// which seeds counted.
func measured(c ClaimSpec, co ClaimOutcome, unit string) string {
	what := c.ccs()[0] + " " + c.metric()
	if c.Ratio != nil {
		what = c.Ratio.A + " / " + c.Ratio.B + " " + c.metric()
		unit = ""
	}
	var each []string
	for _, s := range co.Seeds {
		mark := ""
		if !s.Faithful {
			mark = " (degraded, not counted)"
		}
		each = append(each, fmt.Sprintf("seed %d: %s%s", s.Seed, num(float64(s.Value), unit), mark))
	}
	if math.IsNaN(float64(co.Value)) {
		return what + ": " + strings.Join(each, ", ")
	}
	return fmt.Sprintf("%s: %s (%s)", what, num(float64(co.Value), unit), strings.Join(each, ", "))
}

func (c ClaimSpec) metric() string {
	if c.Value != nil {
		return c.Value.Metric
	}
	return c.Ratio.Metric
}

// num prints a claim's number in its unit.
func num(x float64, unit string) string {
	switch {
	case math.IsInf(x, 1):
		return "never"
	case math.IsNaN(x):
		return "n/a"
	}
	switch unit {
	case "KB":
		return strconv.FormatFloat(x/1e3, 'f', 1, 64) + " KB"
	case "ms":
		return strconv.FormatFloat(x/1e6, 'f', 2, 64) + " ms"
	case "%":
		return fmt.Sprintf("%.0f %%", 100*x)
	case "", "x":
		return f2(x)
	}
	return f2(x) + " " + unit
}

func f2(x float64) string {
	if math.IsInf(x, 1) {
		return "never"
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Value is a claim's number: NaN (not measured) is null in JSON and +Inf
// (never, e.g. a queue that never drained) is "never", as in Metrics.
type Value float64

// MarshalJSON writes NaN as null and +Inf as "never".
func (v Value) MarshalJSON() ([]byte, error) {
	x := float64(v)
	switch {
	case math.IsNaN(x) || math.IsInf(x, -1):
		return []byte("null"), nil
	case math.IsInf(x, 1):
		return []byte(`"never"`), nil
	}
	return json.Marshal(x)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (v *Value) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "null":
		*v = Value(math.NaN())
		return nil
	case `"never"`:
		*v = Value(math.Inf(1))
		return nil
	}
	var x float64
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	*v = Value(x)
	return nil
}
