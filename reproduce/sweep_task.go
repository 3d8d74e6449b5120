package reproduce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"cclab/internal/hostlock"
	"cclab/orchestrator/runner"
	"cclab/rundir"
)

// MarkerFile is a finished task's result marker, in the task's directory.
const MarkerFile = "done.json"

// Marker is a finished task: which plan and task, where it ran, its
// fidelity and its outcome (the runs' directories sit beside it).
type Marker struct {
	Plan     string      `json:"plan"` // the plan's sha256
	Task     Task        `json:"task"`
	Node     rundir.Node `json:"node"`
	Started  string      `json:"started"`
	Finished string      `json:"finished"`
	Faithful bool        `json:"faithful"` // every variant ran and was judged faithful
	Run      RunOutcome  `json:"run"`
}

// TaskDir is where a task runs and leaves its marker.
func (p *Plan) TaskDir(t Task) string {
	return filepath.Join(p.Out, "tasks", fmt.Sprintf("%s-seed%d", t.Experiment, t.Seed))
}

// RunOneOptions configure RunOne.
type RunOneOptions struct {
	Revision string // this build's commit; the plan's must match
	Log      io.Writer
	Wait     bool   // wait for the host lock instead of failing with hostlock.ErrBusy
	LockPath string // default hostlock.DefaultPath
	Retries  int    // degraded variants run again
	Versions map[string]string
	// Extensions are the runner's run extensions, as `cclab run` uses them.
	Extensions func() []runner.Extension
}

// RunOne runs the plan's task index into its directory and writes its
// marker; a task whose marker is there already returns it at once (done
// true), so a requeued task costs nothing. Two RunOne on one host take
// turns (the host lock).
func RunOne(ctx context.Context, planPath string, index int, opt RunOneOptions) (m *Marker, done bool, err error) {
	p, id, err := ReadPlan(planPath)
	if err != nil {
		return nil, false, err
	}
	if index < 0 || index >= len(p.Tasks) {
		return nil, false, fmt.Errorf("task %d: the plan has tasks 0-%d", index, len(p.Tasks)-1)
	}
	t := p.Tasks[index]
	dir := p.TaskDir(t)
	marker := filepath.Join(dir, MarkerFile)
	if m, err := readMarker(marker); err == nil {
		if m.Plan != id {
			return nil, false, fmt.Errorf("%s belongs to another plan (%s): give this plan its own directory", marker, m.Plan[:12])
		}
		return m, true, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, false, err
	}
	if err := p.check(opt.Revision); err != nil {
		return nil, false, err
	}
	exps, err := Find(p.Root, []string{t.Experiment})
	if err != nil {
		return nil, false, err
	}
	pr, err := runner.Prepare(filepath.Join(p.Root, exps[0].File))
	if err != nil {
		return nil, false, err
	}
	return runTask(ctx, p, id, t, exps[0], pr, Options{Root: p.Root, Log: opt.Log, Versions: opt.Versions,
		Extensions: opt.Extensions, Retries: opt.Retries, LockPath: opt.LockPath, Wait: opt.Wait})
}

// runTask runs a task under the host lock into its directory and writes
// its marker; a marker of this plan already there is returned (done).
func runTask(ctx context.Context, p *Plan, id string, t Task, e *Experiment, pr *runner.Prepared, opt Options) (*Marker, bool, error) {
	dir := p.TaskDir(t)
	marker := filepath.Join(dir, MarkerFile)
	if m, err := readMarker(marker); err == nil && m.Plan == id {
		return m, true, nil
	}
	lockPath := opt.LockPath
	if lockPath == "" {
		lockPath = hostlock.DefaultPath
	}
	lock, err := hostlock.Acquire(ctx, lockPath, opt.Wait)
	if err != nil {
		return nil, false, err
	}
	defer lock.Release()
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	m := &Marker{Plan: id, Task: t, Node: runner.ThisNode(0), Started: time.Now().UTC().Format(time.RFC3339)}
	fmt.Fprintf(opt.Log, "-- task %d: %s, seed %d, into %s\n", t.Index, t.Experiment, t.Seed, dir)
	opt.Out = filepath.Join(dir, "runs")
	m.Run = runSeed(ctx, e, pr, t.Seed, opt)
	if err := ctx.Err(); err != nil {
		return nil, false, err // an interrupted task leaves no marker: it runs again
	}
	m.Finished = time.Now().UTC().Format(time.RFC3339)
	m.Faithful = m.Run.Error == "" && len(m.Run.Variants) > 0
	for _, v := range m.Run.Variants {
		m.Faithful = m.Faithful && v.Status == "ran" && v.Fidelity == "faithful"
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, false, err
	}
	if err := atomicWrite(marker, append(b, '\n')); err != nil {
		return nil, false, err
	}
	return m, false, nil
}

// readMarker reads a marker; a file that does not parse is an error
// naming it.
func readMarker(path string) (*Marker, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Marker
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("result marker %s is corrupt: %w (remove it to run the task again)", path, err)
	}
	if m.Plan == "" || m.Task.Experiment == "" {
		return nil, fmt.Errorf("result marker %s is corrupt: no plan or task", path)
	}
	return &m, nil
}
