package linkchange

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"cclab/internal/units"
	"cclab/orchestrator/delay"
	"cclab/orchestrator/netbuild"
	"cclab/topology"
)

// A Record is one change that took effect.
type Record struct {
	Request
	Links []string `json:"links"` // a:b (a>b for one direction)
	// Requested is when the change was asked for, InForce when every
	// place that holds it had it (wall clock, Unix ns); Took the
	// difference.
	Requested int64         `json:"requested_unix_ns"`
	InForce   int64         `json:"in_force_unix_ns"`
	Took      time.Duration `json:"took_ns"`
	// At is when a run's event was due, from the workload's time zero,
	// and Late how long after that it was in force (events only).
	At     time.Duration `json:"at_ns,omitempty"`
	LateNs int64         `json:"late_ns,omitempty"`
}

// Line is the delay line of the network, as far as a change needs it
// (delay.Server).
type Line interface {
	Replace(pl *delay.Placement) error
}

// Switch is the INT switch, as far as a change needs it
// (intswitch.Switch): the rate its ports stamp.
type Switch interface {
	SetRate(node, iface string, rate units.Rate) error
}

// An Applier changes the links of one network. Its plan is a copy of the
// network's, kept current: later changes and the delay line's classes
// are computed from it.
type Applier struct {
	mu     sync.Mutex
	plan   *topology.Plan
	engine delay.Engine
	ch     *netbuild.Changer
	sw     Switch // nil: no switch attached
	line   Line   // nil: no line (no delays, or netem holds them)
	done   []Record
	// rates: each egress whose rate a change set, the rate now and the
	// highest since PeakRate last read it.
	rates map[egress][2]units.Rate
}

type egress struct{ node, iface string }

// PeakRate is the highest rate the egress node/iface had since the
// previous call for it (0: no change ever touched it): what a sampling
// window over that time may carry.
func (a *Applier) PeakRate(node, iface string) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	r, ok := a.rates[egress{node, iface}]
	if !ok {
		return 0
	}
	a.rates[egress{node, iface}] = [2]units.Rate{r[0], r[0]}
	return r[1].BitsPerSecond()
}

// New returns an Applier of net; sw and line may be nil (a nil
// interface, not an interface holding a nil pointer).
func New(net *netbuild.Network, sw Switch, line Line) *Applier {
	p := *net.Plan
	p.Links = append([]topology.Link(nil), net.Plan.Links...)
	return &Applier{plan: &p, engine: net.DelayEngine, ch: net.Changer(), sw: sw, line: line, rates: map[egress][2]units.Rate{}}
}

// Close releases the Applier's netlink handles.
func (a *Applier) Close() { a.ch.Close() }

// Plan is the plan with every change so far (a copy).
func (a *Applier) Plan() *topology.Plan {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := *a.plan
	p.Links = append([]topology.Link(nil), a.plan.Links...)
	return &p
}

// Records are the changes so far, oldest first.
func (a *Applier) Records() []Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Record(nil), a.done...)
}

// Check reports whether r could apply to the network as it is now, without
// changing anything: the target exists, the values are in range, and a
// delay keeps every pair's shortest paths equally long.
func (a *Applier) Check(r Request) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, _, _, err := a.prepare(r)
	return err
}

func (a *Applier) prepare(r Request) (change, target, *delay.Placement, error) {
	c, t, next, err := onPlan(a.plan, r)
	if err != nil {
		return c, t, nil, err
	}
	if c.delay == nil {
		return c, t, nil, nil
	}
	if a.line == nil {
		if a.engine == delay.EngineNetem {
			return c, t, nil, fmt.Errorf("link %q: delay: changing delays needs cclab's delay line (emulation.delay_engine: line); netem holds them here", r.Target)
		}
		return c, t, nil, fmt.Errorf("link %q: delay: the topology had no delay when it was built, so no delay line holds its paths (give its links a delay in the file)", r.Target)
	}
	pl, err := delay.Place(next)
	if err != nil {
		return c, t, nil, fmt.Errorf("link %q: delay %v: %w", r.Target, *c.delay, err)
	}
	return c, t, pl, nil
}

// CheckOn checks r against plan alone, before any network exists (an
// experiment's events when the run is prepared), and returns the plan as
// the change leaves it, for the next change of a sequence.
func CheckOn(plan *topology.Plan, r Request) (*topology.Plan, error) {
	_, _, next, err := onPlan(plan, r)
	return next, err
}

// onPlan parses r, resolves its target on plan and, for a delay, checks
// that the plan with it keeps every pair's shortest paths equally long;
// next is plan with the change.
func onPlan(plan *topology.Plan, r Request) (change, target, *topology.Plan, error) {
	c, err := parseRequest(r)
	t, terr := resolve(plan, r.Target)
	if err = errors.Join(terr, err); err != nil {
		return c, t, nil, err
	}
	if t.oneWay && (c.delay != nil || c.up != nil) {
		return c, t, nil, fmt.Errorf("link %q: delay and state belong to a link, both directions: write %s:%s", r.Target, t.ends[0].from.Node, t.ends[0].to.Node)
	}
	next := *plan
	next.Links = append([]topology.Link(nil), plan.Links...)
	if !t.oneWay {
		for _, i := range t.links {
			applyTo(&next.Links[i], c)
		}
	}
	if c.delay != nil && next.HasDelay() {
		if _, err := next.PathDelays(); err != nil {
			return c, t, nil, fmt.Errorf("link %q: delay %v: %w", r.Target, *c.delay, err)
		}
	}
	return c, t, &next, nil
}

// applyTo writes a change into a plan's link.
func applyTo(l *topology.Link, c change) {
	if c.rate != nil {
		l.Rate = *c.rate
	}
	if c.delay != nil {
		l.Delay = *c.delay
	}
	if c.buffer != nil {
		l.Buffer = *c.buffer
		if l.HostBuffer != 0 {
			l.HostBuffer = *c.buffer
		}
	}
}

// ApplyAt is Apply for a run's event due at time at of the run (the wall
// clock's due): the record says when it was due and how long after that
// it was in force.
func (a *Applier) ApplyAt(ctx context.Context, r Request, at time.Duration, due time.Time) (Record, error) {
	rec, err := a.Apply(ctx, r)
	if err != nil {
		return rec, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	last := &a.done[len(a.done)-1]
	last.At, last.LateNs = at, last.InForce-due.UnixNano()
	return *last, nil
}

// Apply makes the change r in the network and returns its record once it
// is in force. Everything is checked first; a step that fails undoes the
// steps before it, so a failed change leaves the links as they were.
func (a *Applier) Apply(ctx context.Context, r Request) (Record, error) {
	requested := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	rec := Record{Request: r, Requested: requested.UnixNano()}
	c, t, pl, err := a.prepare(r)
	if err != nil {
		return rec, err
	}
	if err := ctx.Err(); err != nil {
		return rec, err
	}
	var undo []func() error
	fail := func(err error) (Record, error) {
		var errs []error
		for i := len(undo) - 1; i >= 0; i-- {
			errs = append(errs, undo[i]())
		}
		if uerr := errors.Join(errs...); uerr != nil {
			return rec, fmt.Errorf("link %q: %w (and undoing what had changed: %v)", r.Target, err, uerr)
		}
		return rec, fmt.Errorf("link %q: %w", r.Target, err)
	}
	if pl != nil {
		old := delay.Placement{}
		if prev, err := delay.Place(a.plan); err == nil {
			old = *prev
		}
		if err := a.line.Replace(pl); err != nil {
			return fail(err)
		}
		undo = append(undo, func() error { return a.line.Replace(&old) })
	}
	for _, e := range t.ends {
		l := a.plan.Links[e.link]
		if c.rate != nil {
			if err := a.ch.SetRate(e.from.Node, e.from.Iface, *c.rate); err != nil {
				return fail(err)
			}
			undo = append(undo, func() error { return a.ch.SetRate(e.from.Node, e.from.Iface, l.Rate) })
			if a.sw != nil && a.isSwitch(e.from.Node) {
				if err := a.sw.SetRate(e.from.Node, e.from.Iface, *c.rate); err != nil {
					return fail(err)
				}
				undo = append(undo, func() error { return a.sw.SetRate(e.from.Node, e.from.Iface, l.Rate) })
			}
		}
		if c.buffer != nil {
			oldBuf := a.bufferAt(l, e.from.Node)
			if err := a.ch.SetBuffer(e.from.Node, e.from.Iface, *c.buffer); err != nil {
				return fail(err)
			}
			undo = append(undo, func() error { return a.ch.SetBuffer(e.from.Node, e.from.Iface, oldBuf) })
		}
	}
	if c.up != nil {
		for _, i := range t.links {
			l := a.plan.Links[i]
			if err := a.ch.SetState(l, *c.up); err != nil {
				return fail(err)
			}
			undo = append(undo, func() error { return a.ch.SetState(l, !*c.up) })
		}
	}
	// In force everywhere: record it in the plan.
	if !t.oneWay {
		for _, i := range t.links {
			applyTo(&a.plan.Links[i], c)
		}
	}
	if c.rate != nil {
		for _, e := range t.ends {
			k := egress{e.from.Node, e.from.Iface}
			old, ok := a.rates[k]
			if !ok {
				old = [2]units.Rate{0, 0}
			}
			a.rates[k] = [2]units.Rate{*c.rate, max(old[1], *c.rate)}
		}
	}
	now := time.Now()
	rec.Links, rec.InForce, rec.Took = t.names(a.plan), now.UnixNano(), now.Sub(requested)
	a.done = append(a.done, rec)
	return rec, nil
}

func (a *Applier) isSwitch(node string) bool {
	n, ok := a.plan.Node(node)
	return ok && n.Role == topology.Switch
}

// bufferAt is the FIFO limit at node's end of l.
func (a *Applier) bufferAt(l topology.Link, node string) units.Size {
	if l.HostBuffer != 0 && !a.isSwitch(node) {
		return l.HostBuffer
	}
	return l.Buffer
}
