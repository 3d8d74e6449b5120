package runner

import (
	"context"
	"fmt"
	"time"
)

// A stage is one named step of a variant's run, on the extensions' shape:
// Start does the step, Stop undoes what it left running. runStages starts
// them in order and, whatever happened, stops the ones it started in
// reverse order (that is the teardown); a stage whose Start failed half-way
// is stopped too, so each Stop must undo only what its Start did.
type stage interface {
	Name() string
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// StageTime is how long one stage of a variant took (run.json "stages").
type StageTime struct {
	Name string `json:"name"`
	Ns   int64  `json:"ns"`
}

// stageTeardown is the name run.json gives the reverse loop of Stops.
const stageTeardown = "teardown"

// runStages starts the stages in order until one fails or all are done,
// then stops the started ones in reverse (without the context's
// cancellation: a signal must not leave anything behind). It returns each
// stage's time, the teardown's last, and the first error: a Start's, or
// else a Stop's.
func runStages(ctx context.Context, stages []stage) ([]StageTime, error) {
	var times []StageTime
	var started []stage
	var err error
	for _, s := range stages {
		begin := time.Now()
		started = append(started, s)
		err = s.Start(ctx)
		times = append(times, StageTime{Name: s.Name(), Ns: time.Since(begin).Nanoseconds()})
		if err != nil {
			break
		}
	}
	begin := time.Now()
	for i := len(started) - 1; i >= 0; i-- {
		if serr := started[i].Stop(context.WithoutCancel(ctx)); serr != nil && err == nil {
			err = fmt.Errorf("tear down (%s): %w", started[i].Name(), serr)
		}
	}
	times = append(times, StageTime{Name: stageTeardown, Ns: time.Since(begin).Nanoseconds()})
	return times, err
}
