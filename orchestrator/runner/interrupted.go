package runner

import (
	"context"
	"fmt"
	"time"

	"cclab/internal/interrupt"
	"cclab/rundir"
)

// interruption is run.json's record of what cancelled ctx: the signal and
// when it came (docs/run-directory.md); nil while ctx is not cancelled.
func interruption(ctx context.Context) *rundir.Interrupted {
	if ctx.Err() == nil {
		return nil
	}
	if s := interrupt.Cause(ctx); s != nil {
		return &rundir.Interrupted{Signal: s.Name(), At: s.At.UTC().Format(time.RFC3339Nano), Cause: s.Error()}
	}
	return &rundir.Interrupted{At: time.Now().UTC().Format(time.RFC3339Nano), Cause: context.Cause(ctx).Error()}
}

// markInterrupted records in run.json that the run was cancelled, if it
// was: the marker, and the verdict "interrupted" whatever the invariants
// said (a cut workload's numbers are no result). It reports whether the
// run was interrupted.
func (rj *RunJSON) markInterrupted(ctx context.Context) bool {
	if rj.Interrupted != nil {
		return true
	}
	in := interruption(ctx)
	if in == nil {
		return false
	}
	rj.Interrupted = in
	rj.Fidelity.Interrupt(fmt.Sprintf("%s at %s: the workload did not finish", in.Cause, in.At))
	return true
}

// holdsFinishedRun reports whether dir holds a run (its own run.json or
// its variants') of which none was interrupted: the directory of an
// interrupted run is leftovers that a new run of the same id replaces.
// A run.json that cannot be read counts as finished.
func holdsFinishedRun(dir string) bool {
	var runs []string
	if rundir.IsRun(dir) {
		runs = append(runs, dir)
	}
	vs, _ := rundir.Variants(dir)
	runs = append(runs, vs...)
	for _, r := range runs {
		if ri, err := rundir.ReadInfo(r); err == nil && ri.Interrupted != nil {
			return false
		}
	}
	return len(runs) > 0
}
