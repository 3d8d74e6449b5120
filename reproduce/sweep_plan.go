package reproduce

import (
	"cclab/analysis/report"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"cclab/orchestrator/runner"
)

// A sweep is the suite's runs as a list of independent tasks, one per
// (experiment, seed) with all its variants (they share the topology and
// the calibration), for whatever runs them: the local executor, a Slurm
// job array, a Kubernetes Indexed Job. plan.json fixes the tasks, the
// experiment files' contents and the cclab build; run-one runs one task
// into its own directory and leaves a marker; gather pools the markers.

// PlanFile is the plan's name in its directory.
const PlanFile = "plan.json"

// planFormat counts changes of plan.json's meaning.
const planFormat = 1

// Plan is a sweep.
type Plan struct {
	Format int `json:"format"`
	// Revision is the commit of the cclab that made the plan ("" for a
	// build without one): run-one refuses another's.
	Revision    string           `json:"revision"`
	Created     string           `json:"created"`
	Root        string           `json:"root"` // the repository the experiment files are read from
	Out         string           `json:"out"`  // the plan's directory: tasks and results, on every node
	Experiments []PlanExperiment `json:"experiments"`
	Tasks       []Task           `json:"tasks"`
}

// PlanExperiment is an experiment file as the plan saw it.
type PlanExperiment struct {
	Name   string  `json:"name"`
	File   string  `json:"file"`   // relative to Root
	SHA256 string  `json:"sha256"` // of the file's content
	Seeds  []int64 `json:"seeds"`
}

// Task is one run: every variant of one experiment with one seed.
type Task struct {
	Index      int    `json:"index"`
	Experiment string `json:"experiment"`
	Seed       int64  `json:"seed"`
}

// PlanOptions choose the seeds.
type PlanOptions struct {
	Root, Out, Revision string
	// Seeds per experiment (1..Seeds); 0: the file's own seeds.
	Seeds int
	// Flows: enough seeds for every per-flow claim to pool this many
	// flows in its class (and at least its n), counted from the planned
	// workloads; it overrides Seeds. MaxSeeds caps it (default 1000).
	Flows, MaxSeeds int
}

// MakePlan plans the named experiments ("all": the suite).
func MakePlan(names []string, opt PlanOptions) (*Plan, error) {
	exps, err := Find(opt.Root, names)
	if err != nil {
		return nil, err
	}
	if opt.Out == "" {
		return nil, errors.New("a plan needs its directory (--out), one every node can write")
	}
	out, err := filepath.Abs(opt.Out)
	if err != nil {
		return nil, err
	}
	root, err := filepath.Abs(opt.Root)
	if err != nil {
		return nil, err
	}
	p := &Plan{Format: planFormat, Revision: opt.Revision, Created: time.Now().UTC().Format(time.RFC3339), Root: root, Out: out}
	for _, e := range exps {
		sum, err := fileSHA256(filepath.Join(root, e.File))
		if err != nil {
			return nil, err
		}
		seeds := e.Seeds
		switch {
		case opt.Flows > 0 && (hasFlowClaims(e) || (len(names) == 1 && names[0] != "all")):
			if seeds, err = seedsForFlows(e, root, opt.Flows, opt.MaxSeeds); err != nil {
				return nil, err
			}
		case opt.Seeds > 0:
			seeds = nil
			for s := 1; s <= opt.Seeds; s++ {
				seeds = append(seeds, int64(s))
			}
		}
		p.Experiments = append(p.Experiments, PlanExperiment{Name: e.Name, File: e.File, SHA256: sum, Seeds: seeds})
		for _, s := range seeds {
			p.Tasks = append(p.Tasks, Task{Index: len(p.Tasks), Experiment: e.Name, Seed: s})
		}
	}
	return p, nil
}

// hasFlowClaims reports whether a claim of e reads per-flow numbers
// (an experiment without one keeps its seeds under --flows).
func hasFlowClaims(e *Experiment) bool {
	for _, c := range e.Claims {
		if e.measure.PerFlow(c.metric()) {
			return true
		}
	}
	return false
}

// seedsForFlows is the fewest seeds 1..k whose planned workloads give
// every per-flow claim of e at least flows (and its n) in its class.
func seedsForFlows(e *Experiment, root string, flows, maxSeeds int) ([]int64, error) {
	if maxSeeds <= 0 {
		maxSeeds = 1000
	}
	need := map[string]int{}
	for _, c := range e.Claims {
		if e.measure.PerFlow(c.metric()) {
			need[c.metric()] = max(need[c.metric()], flows, c.N)
		}
	}
	if len(need) == 0 {
		return nil, fmt.Errorf("%s: --flows: no claim of it reads per-flow numbers; give --seeds", e.Name)
	}
	p, err := runner.Prepare(filepath.Join(root, e.File))
	if err != nil {
		return nil, err
	}
	have := map[string]int{}
	var seeds []int64
	for s := int64(1); len(seeds) < maxSeeds; s++ {
		ps, err := p.Reseed(s)
		if err != nil {
			return nil, err
		}
		for m, n := range plannedFlows(e, ps) {
			have[m] += n
		}
		seeds = append(seeds, s)
		done := true
		for m, n := range need {
			done = done && have[m] >= n
		}
		if done {
			return seeds, nil
		}
	}
	return nil, fmt.Errorf("%s: --flows %d needs more than %d seeds", e.Name, flows, maxSeeds)
}

// plannedFlows counts a seed's planned flows in each per-flow metric's
// class: the size classes of slowdowns, the mice group's flows.
func plannedFlows(e *Experiment, p *runner.Prepared) map[string]int {
	out := map[string]int{}
	group := e.Group
	if group == "" {
		group = "mice"
	}
	for _, f := range p.Variants[0].Flows {
		if f.Long() {
			continue
		}
		for _, key := range report.SlowdownClasses(f.Size) {
			out[key]++
		}
		if f.Size < report.Under50KB {
			out["under50k_slowdown"]++
		}
		if f.Group == group {
			out["mice_latency"]++
			out["mice_wait"]++
		}
	}
	return out
}

// Write writes plan.json into the plan's directory.
func (p *Plan) Write() error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	return atomicWrite(filepath.Join(p.Out, PlanFile), append(b, '\n'))
}

// ReadPlan reads a plan and its identity (the hash of its bytes, which
// every marker of it carries).
func ReadPlan(path string) (*Plan, string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("plan: %w", err)
	}
	var p Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, "", fmt.Errorf("plan %s: %w", path, err)
	}
	if p.Format != planFormat {
		return nil, "", fmt.Errorf("plan %s: format %d, this cclab reads %d", path, p.Format, planFormat)
	}
	sum := sha256.Sum256(b)
	return &p, hex.EncodeToString(sum[:]), nil
}

// check refuses a plan this build or these files did not make: another
// cclab revision, or an experiment file changed since.
func (p *Plan) check(revision string) error {
	if p.Revision != revision {
		return fmt.Errorf("the plan was made by cclab revision %q, this is %q: plan again, or run the plan's build", p.Revision, revision)
	}
	for _, e := range p.Experiments {
		sum, err := fileSHA256(filepath.Join(p.Root, e.File))
		if err != nil {
			return err
		}
		if sum != e.SHA256 {
			return fmt.Errorf("%s changed since the plan (sha256 %s, planned %s): plan again", e.File, sum[:12], e.SHA256[:12])
		}
	}
	return nil
}

func fileSHA256(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
