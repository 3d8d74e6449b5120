package experiment

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"cclab/internal/units"
)

// A LinkEvent changes a link (or a tier) at a time of the run, as `cclab
// link set` does on a live topology (orchestrator/linkchange): the
// target is "a:b", "a>b" or a tier name; the fields left out stay.
type LinkEvent struct {
	At     units.Duration  `yaml:"at" json:"at_ns"` // from the workload's time zero; in a schedule, from the period's start
	Link   string          `yaml:"link" json:"link"`
	Rate   units.Rate      `yaml:"rate" json:"rate_bps,omitempty"`
	Delay  *units.Duration `yaml:"delay" json:"delay_ns,omitempty"`
	Buffer units.Size      `yaml:"buffer" json:"buffer_bytes,omitempty"`
	State  string          `yaml:"state" json:"state,omitempty"` // up or down
	Line   int             `yaml:"-" json:"-"`
}

// UnmarshalYAML decodes strictly and remembers the line.
func (ev *LinkEvent) UnmarshalYAML(n *yaml.Node) error {
	type plain LinkEvent
	ev.Line = n.Line
	return decodeStrict(n, (*plain)(ev))
}

// A Schedule repeats its steps every Period from Start until Stop (no
// period begins at or after Stop): e.g. a circuit's day and night.
type Schedule struct {
	Period units.Duration `yaml:"period" json:"period_ns"`
	Start  units.Duration `yaml:"start" json:"start_ns"`
	Stop   units.Duration `yaml:"stop" json:"stop_ns"`
	Steps  []LinkEvent    `yaml:"steps" json:"steps"`
	Line   int            `yaml:"-" json:"-"`
}

// UnmarshalYAML decodes strictly and remembers the line.
func (s *Schedule) UnmarshalYAML(n *yaml.Node) error {
	type plain Schedule
	s.Line = n.Line
	return decodeStrict(n, (*plain)(s))
}

// MinChangeGap is the least time between two changes of a schedule: the
// time a change takes to be in force everywhere, with a margin (its p99 is
// under 5 ms: docs/performance.md, "Live link changes").
const MinChangeGap = 10 * time.Millisecond

// MaxScheduledChanges bounds how many changes a schedule expands to.
const MaxScheduledChanges = 100000

func (ev *LinkEvent) validate(p *problems, what string) {
	if ev.Link == "" {
		p.add(ev.Line, "%s: no link (a:b, a>b or a tier name)", what)
	}
	if ev.At < 0 {
		p.add(ev.Line, "%s: at %v is negative", what, ev.At)
	}
	switch strings.ToLower(ev.State) {
	case "", "up", "down":
	default:
		p.add(ev.Line, "%s: state %q: use up or down", what, ev.State)
	}
	if ev.Rate == 0 && ev.Delay == nil && ev.Buffer == 0 && ev.State == "" {
		p.add(ev.Line, "%s: nothing to change (rate, delay, buffer or state)", what)
	}
}

// validateEvents checks events and the schedule on their own (the
// targets against the topology are checked when the run is prepared).
func (e *Experiment) validateEvents(p *problems) {
	for i := range e.Events {
		e.Events[i].validate(p, fmt.Sprintf("events[%d]", i))
	}
	s := e.Schedule
	if s == nil {
		return
	}
	if len(s.Steps) == 0 {
		p.add(s.Line, "schedule: no steps")
	}
	if s.Period <= 0 {
		p.add(s.Line, "schedule: period must be positive")
		return
	}
	if s.Stop <= s.Start {
		p.add(s.Line, "schedule: stop %v is not after start %v", s.Stop, s.Start)
	}
	for i := range s.Steps {
		st := &s.Steps[i]
		st.validate(p, fmt.Sprintf("schedule step %d", i))
		if st.At >= s.Period {
			p.add(st.Line, "schedule step %d: at %v is not within the period %v", i, st.At, s.Period)
		}
	}
	// Each change must be in force before the next is due: every gap
	// between consecutive steps, around the period, at least MinChangeGap.
	ats := make([]time.Duration, len(s.Steps))
	for i, st := range s.Steps {
		ats[i] = st.At.D()
	}
	sort.Slice(ats, func(i, j int) bool { return ats[i] < ats[j] })
	for i := range ats {
		next := s.Period.D()
		if i+1 < len(ats) {
			next = ats[i+1]
		} else if len(ats) > 0 {
			next += ats[0]
		}
		if gap := next - ats[i]; gap < MinChangeGap && len(ats) > 1 || len(ats) == 1 && s.Period.D() < MinChangeGap {
			p.add(s.Line, "schedule: period %v: steps %v apart; a change needs %v to be in force everywhere before the next (docs/experiments.md)",
				s.Period, max(gap, 0), MinChangeGap)
			break
		}
	}
	if s.Stop > s.Start && s.Period > 0 {
		if n := int64(s.Stop-s.Start) / int64(s.Period) * int64(len(s.Steps)); n > MaxScheduledChanges {
			p.add(s.Line, "schedule: %d changes, at most %d", n, MaxScheduledChanges)
		}
	}
}

// LinkChanges are the events and the schedule's steps as one list, in
// time order from the workload's time zero.
func (e *Experiment) LinkChanges() []LinkEvent {
	out := append([]LinkEvent(nil), e.Events...)
	if s := e.Schedule; s != nil && s.Period > 0 {
		for p := s.Start; p < s.Stop; p += s.Period {
			for _, st := range s.Steps {
				st.At += p
				out = append(out, st)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out
}
