package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"cclab/orchestrator/delay"
	"cclab/orchestrator/experiment"
	"cclab/orchestrator/flows"
	"cclab/orchestrator/linkchange"
	"cclab/topology"
)

// checkLinkEvents checks, before anything is built, that each of the
// experiment's link changes names links of the plan with values in range
// and, in order, keeps every pair's shortest paths equally long.
func checkLinkEvents(exp *experiment.Experiment, plan *topology.Plan) error {
	var errs []error
	for _, ev := range exp.LinkChanges() {
		next, err := linkchange.CheckOn(plan, linkchange.FromEvent(ev))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %w", exp.File, ev.Line, err))
			continue
		}
		plan = next
		if len(errs) > 10 {
			break
		}
	}
	return errors.Join(errs...)
}

// linkEvents is the extension that applies an experiment's events and
// schedule at their times (from the workload's time zero), with the same
// Applier as `cclab link set`; run.json records each change with when it
// was due and when it was in force.
type linkEvents struct {
	changes []experiment.LinkEvent
	tel     *telemetry // the switch, when the run attaches one
	line    *delay.Server

	app    *linkchange.Applier
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	errs   []string
}

// LinkEventsJSON is what run.json records under extensions.link_events.
type LinkEventsJSON struct {
	Changes []linkchange.Record `json:"changes"`
	// Late is how far the latest change came into force after it was
	// due; Errors the changes that failed.
	LateMaxNs int64    `json:"late_max_ns"`
	Errors    []string `json:"errors,omitempty"`
}

func (x *linkEvents) Name() string { return "link_events" }

func (x *linkEvents) Start(ctx context.Context, env *Env) error {
	var sw linkchange.Switch
	if x.tel != nil && x.tel.sw != nil {
		sw = x.tel.sw
	}
	var line linkchange.Line
	if x.line != nil {
		line = x.line
	}
	x.app = linkchange.New(env.Network, sw, line)
	x.ctx, x.cancel = context.WithCancel(context.WithoutCancel(ctx))
	return nil
}

// Begin starts applying the changes, from the workload's final time zero
// (CLOCK_MONOTONIC ns): the runner moves it after the extensions started.
func (x *linkEvents) Begin(zero int64) {
	ctx := x.ctx
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		for _, ev := range x.changes {
			wait := time.Duration(zero + int64(ev.At) - flows.Monotonic())
			due := time.Now().Add(wait)
			if wait > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			}
			if _, err := x.app.ApplyAt(ctx, linkchange.FromEvent(ev), ev.At.D(), due); err != nil {
				x.errs = append(x.errs, fmt.Sprintf("at %v: %v", ev.At, err))
			}
		}
	}()
}

func (x *linkEvents) Stop(context.Context) (any, error) {
	x.cancel()
	x.wg.Wait()
	defer x.app.Close()
	out := LinkEventsJSON{Changes: x.app.Records(), Errors: x.errs}
	for _, r := range out.Changes {
		out.LateMaxNs = max(out.LateMaxNs, r.LateNs)
	}
	return out, nil
}
