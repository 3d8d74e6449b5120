package report

import (
	"time"

	"cclab/internal/units"
	"cclab/rundir"
	"cclab/topology"
)

// A LinkWindow is a time a run's events held links above the rate their
// topology gives them (a circuit's day: experiments/reproduce/
// powertcp-rdcn.yaml), from the analysis's time zero. The time-series
// figures shade them.
type LinkWindow struct {
	Target  string        `json:"target"`
	Links   []string      `json:"links"`
	Start   time.Duration `json:"start_ns"`
	End     time.Duration `json:"end_ns"`
	RateBps uint64        `json:"rate_bps"` // the raised rate
	BaseBps uint64        `json:"base_bps"` // the links' configured rate
	// Open: the run ended with the links still raised (End is the run's
	// last sample).
	Open bool `json:"open,omitempty"`
}

// linkWindows reads the windows out of the run's link changes: a change
// of a target's rate above its links' configured rate opens one, a later
// change of the same target to the configured rate or below closes it.
func linkWindows(changes []rundir.LinkChange, plan *topology.Plan, origin int64, end time.Duration) []LinkWindow {
	if plan == nil {
		return nil
	}
	configured := map[string]units.Rate{}
	for _, l := range plan.Links {
		configured[l.A.Node+":"+l.B.Node] = l.Rate
		configured[l.B.Node+":"+l.A.Node] = l.Rate
		configured[l.A.Node+">"+l.B.Node] = l.Rate
		configured[l.B.Node+">"+l.A.Node] = l.Rate
	}
	var out []LinkWindow
	open := map[string]int{} // target -> index in out
	for _, c := range changes {
		if c.Rate == "" || len(c.Links) == 0 {
			continue
		}
		r, err := units.ParseRate(c.Rate)
		base, ok := configured[c.Links[0]]
		if err != nil || !ok {
			continue
		}
		at := time.Duration(c.InForce - origin)
		i, isOpen := open[c.Target]
		switch {
		case r > base && !isOpen:
			open[c.Target] = len(out)
			out = append(out, LinkWindow{Target: c.Target, Links: c.Links, Start: at, RateBps: r.BitsPerSecond(), BaseBps: base.BitsPerSecond()})
		case r <= base && isOpen:
			out[i].End = at
			delete(open, c.Target)
		}
	}
	for _, i := range open {
		out[i].End, out[i].Open = max(end, out[i].Start), true
	}
	return out
}

// lastTime is the latest time of the analysis's queue samples and flows.
func lastTime(a *Analysis) time.Duration {
	var end time.Duration
	for _, q := range a.Queues {
		if n := len(q.Samples); n > 0 {
			end = max(end, q.Samples[n-1].T)
		}
	}
	for _, f := range a.Flows {
		if f.End > 0 {
			end = max(end, time.Duration(f.End-a.Origin))
		}
	}
	return end
}
