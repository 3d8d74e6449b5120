package reproduce

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"cclab/analysis/stats"
)

// A band is the range of the claim's number that agrees with the paper.
// The claim's confidence interval inside it agrees, outside it
// disagrees, across its edge is inconclusive. The bands:
//   - improvement: "X % better" (ratio a/b = 1 - X/100) agrees when the
//     improvement is within [X/2, min(2X, 100)] %; "X % worse" (a/b =
//     1 + X/100) within [X/2, 2X] %.
//   - factor2: a ratio or an absolute figure within a factor of 2 of the
//     paper's (one-sided for at_most and at_least), a ratio also on the
//     paper's side of 1.
//   - limit: the lab's reading of a claim with no number: at most or at
//     least value.limit.
//   - direction: a ratio with no number: below or above 1.
//   - range: a figure the paper states as a range, paper.value to
//     paper.upper, agrees within [0.9 value, 1.1 upper]: the paper's
//     range and a tenth more either side for the lab's measurement.
type band struct {
	kind           string
	lo, hi         float64
	loOpen, hiOpen bool // the edge itself is outside
}

var bandKinds = []string{"improvement", "factor2", "limit", "direction", "range"}

// rangeSlack widens a paper's range by this share of its ends (band range).
const rangeSlack = 0.1

// band is the claim's band, or why the file's band does not fit the claim.
func (c ClaimSpec) band() (band, error) {
	inf := math.Inf(1)
	p := c.Paper.Value
	b := band{kind: c.Band, lo: -inf, hi: inf}
	switch c.Band {
	case "improvement":
		if c.Ratio == nil || p == nil {
			return b, errors.New("band improvement is for a ratio claim with the paper's number (\"X % better\")")
		}
		if c.Ratio.Direction == "below" {
			x := 1 - *p
			b.lo, b.hi = 1-math.Min(2*x, 1), 1-x/2
		} else {
			x := *p - 1
			b.lo, b.hi = 1+x/2, 1+2*x
		}
	case "factor2":
		if p == nil {
			return b, errors.New("band factor2 needs the paper's number (paper.value)")
		}
		if c.Ratio != nil && *p >= 0.5 && *p <= 2 {
			// Within 2x of a ratio in [0.5, 2] is any improvement (or any
			// worsening): the size of a "X % better" is the improvement's.
			return b, fmt.Errorf("band factor2 on a ratio of %v accepts any ratio on its side of 1: use band improvement", *p)
		}
		b.lo, b.hi = *p/2, *p*2
		if v := c.Value; v != nil {
			switch v.Bound {
			case "at_most":
				b.lo = -inf
			case "at_least":
				b.hi = inf
			}
		} else if c.Ratio.Direction == "below" && b.hi >= 1 {
			b.hi, b.hiOpen = 1, true
		} else if c.Ratio.Direction == "above" && b.lo <= 1 {
			b.lo, b.loOpen = 1, true
		}
	case "limit":
		if c.Value == nil || p != nil || c.Value.Limit == nil {
			return b, errors.New("band limit is for a value claim whose paper states no number (value.limit: the lab's reading)")
		}
		if c.Value.Bound == "at_most" {
			b.hi = *c.Value.Limit
		} else {
			b.lo = *c.Value.Limit
		}
	case "range":
		u := c.Paper.Upper
		if c.Value == nil || p == nil || u == nil || *u < *p {
			return b, errors.New("band range is for a value claim whose paper states a range (paper.value to paper.upper)")
		}
		b.lo, b.hi = *p*(1-rangeSlack), *u*(1+rangeSlack)
	case "direction":
		if c.Ratio == nil || p != nil {
			return b, errors.New("band direction is for a ratio claim whose paper states no number")
		}
		if c.Ratio.Direction == "below" {
			b.hi, b.hiOpen = 1, true
		} else {
			b.lo, b.loOpen = 1, true
		}
	default:
		return b, fmt.Errorf("band %q: one of %v", c.Band, bandKinds)
	}
	return b, nil
}

// inside reports whether x is in the band.
func (b band) inside(x float64) bool {
	above := x > b.lo || (!b.loOpen && x == b.lo)
	below := x < b.hi || (!b.hiOpen && x == b.hi)
	return above && below
}

// judge holds an interval against the band.
func (b band) judge(ci stats.Interval) string {
	switch {
	case b.inside(ci.Lo) && b.inside(ci.Hi):
		return Agrees
	case ci.Hi < b.lo || (b.loOpen && ci.Hi == b.lo) || ci.Lo > b.hi || (b.hiOpen && ci.Lo == b.hi):
		return Disagrees
	}
	return Inconclusive
}

// describe prints the band in the claim's unit (a ratio's edges to three
// digits; an improvement's also as the improvement).
func (b band) describe(unit string) string {
	edge := func(x float64) string {
		if unit == "" {
			return strconv.FormatFloat(x, 'g', 3, 64)
		}
		return num(x, unit)
	}
	s := b.edges(edge)
	if b.kind == "improvement" {
		if b.hi <= 1 {
			s = fmt.Sprintf("an improvement of %s-%s %% (a/b in %s)", edge(100*(1-b.hi)), edge(100*(1-b.lo)), s)
		} else {
			s = fmt.Sprintf("a worsening of %s-%s %% (a/b in %s)", edge(100*(b.lo-1)), edge(100*(b.hi-1)), s)
		}
	}
	return s
}

// edges prints the band's range.
func (b band) edges(num func(float64) string) string {
	l, h := "[", "]"
	if b.loOpen {
		l = "("
	}
	if b.hiOpen {
		h = ")"
	}
	switch {
	case math.IsInf(b.lo, -1) && math.IsInf(b.hi, 1):
		return "any"
	case math.IsInf(b.lo, -1):
		if b.hiOpen {
			return "< " + num(b.hi)
		}
		return "<= " + num(b.hi)
	case math.IsInf(b.hi, 1):
		if b.loOpen {
			return "> " + num(b.lo)
		}
		return ">= " + num(b.lo)
	}
	return l + num(b.lo) + ", " + num(b.hi) + h
}
