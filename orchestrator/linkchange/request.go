package linkchange

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"cclab/internal/units"
	"cclab/orchestrator/experiment"
)

// A Request is one change as given (`cclab link set`, an event of an
// experiment file): the target and the fields to change, as text.
type Request struct {
	Target string `json:"target" yaml:"link"`
	Rate   string `json:"rate,omitempty" yaml:"rate"`
	Delay  string `json:"delay,omitempty" yaml:"delay"`
	Buffer string `json:"buffer,omitempty" yaml:"buffer"`
	State  string `json:"state,omitempty" yaml:"state"` // up or down
}

// Limits of what a change may ask for: the ranges the fabric can hold.
const (
	MinRate   = units.Rate(64_000)          // HTB's rate tables lose precision below
	MaxRate   = units.Rate(100_000_000_000) // far above what a veth carries here
	MinBuffer = units.Size(1514)            // one full frame
	MaxBuffer = units.Size(1 << 30)
	MaxDelay  = units.Duration(time.Second)
)

// change is a Request parsed and checked on its own.
type change struct {
	rate   *units.Rate
	delay  *units.Duration
	buffer *units.Size
	up     *bool
}

// ParseRequest parses the fields of r (not its target) and checks them
// against the limits; every problem at once.
func parseRequest(r Request) (change, error) {
	var c change
	var errs []error
	if r.Rate != "" {
		v, err := units.ParseRate(r.Rate)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("rate: %w", err))
		case v < MinRate || v > MaxRate:
			errs = append(errs, fmt.Errorf("rate %v: out of range %v to %v", v, MinRate, MaxRate))
		default:
			c.rate = &v
		}
	}
	if r.Delay != "" {
		v, err := units.ParseDuration(r.Delay)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("delay: %w", err))
		case v < 0 || v > MaxDelay:
			errs = append(errs, fmt.Errorf("delay %v: out of range 0 to %v", v, MaxDelay))
		default:
			c.delay = &v
		}
	}
	if r.Buffer != "" {
		v, err := units.ParseSize(r.Buffer)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("buffer: %w", err))
		case v < MinBuffer || v > MaxBuffer:
			errs = append(errs, fmt.Errorf("buffer %v: out of range %v to %v", v, MinBuffer, MaxBuffer))
		default:
			c.buffer = &v
		}
	}
	switch strings.ToLower(r.State) {
	case "":
	case "up", "down":
		up := strings.EqualFold(r.State, "up")
		c.up = &up
	default:
		errs = append(errs, fmt.Errorf("state %q: want up or down", r.State))
	}
	if len(errs) == 0 && c.rate == nil && c.delay == nil && c.buffer == nil && c.up == nil {
		errs = append(errs, errors.New("nothing to change: give rate=, delay=, buffer= or state="))
	}
	return c, errors.Join(errs...)
}

// ParseArgs reads `cclab link set`'s name=value arguments into r.
func ParseArgs(target string, args []string) (Request, error) {
	r := Request{Target: target}
	seen := map[string]bool{}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || v == "" {
			return r, fmt.Errorf("%q: want name=value (rate=, delay=, buffer=, state=)", a)
		}
		if seen[k] {
			return r, fmt.Errorf("%s given twice", k)
		}
		seen[k] = true
		switch k {
		case "rate":
			r.Rate = v
		case "delay":
			r.Delay = v
		case "buffer":
			r.Buffer = v
		case "state":
			r.State = v
		default:
			return r, fmt.Errorf("%q: unknown field %s (rate, delay, buffer, state)", a, k)
		}
	}
	return r, nil
}

// FromEvent is the Request of an experiment's link event.
func FromEvent(ev experiment.LinkEvent) Request {
	r := Request{Target: ev.Link, State: ev.State}
	if ev.Rate != 0 {
		r.Rate = ev.Rate.String()
	}
	if ev.Delay != nil {
		r.Delay = ev.Delay.String()
	}
	if ev.Buffer != 0 {
		r.Buffer = ev.Buffer.String()
	}
	return r
}
