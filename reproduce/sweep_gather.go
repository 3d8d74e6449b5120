package reproduce

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"cclab/orchestrator/runner"
)

// GatherReport is what a gather found: the experiments judged, and the
// tasks that are missing, degraded, of another plan or unreadable.
type GatherReport struct {
	Outcomes []*Outcome     `json:"-"`
	Tasks    int            `json:"tasks"`
	Done     int            `json:"done"`
	Missing  []Task         `json:"missing,omitempty"`
	Degraded []TaskNote     `json:"degraded,omitempty"`
	Refused  []string       `json:"refused,omitempty"` // markers of another plan, corrupt markers
	Nodes    map[string]int `json:"nodes"`             // tasks per node
}

// TaskNote is a task with what went wrong and where.
type TaskNote struct {
	Task Task   `json:"task"`
	Node string `json:"node"`
	Why  string `json:"why"`
}

// Gather pools every finished task of the plan through the claims'
// statistics and publishes the results page under docs (results.md and
// results/ with the store and health.md). What is
// missing or degraded is reported, not ignored; markers of another plan
// and corrupt markers are refused, each by its file.
func Gather(planPath, docs string) (*GatherReport, error) {
	p, id, err := ReadPlan(planPath)
	if err != nil {
		return nil, err
	}
	r := &GatherReport{Tasks: len(p.Tasks), Nodes: map[string]int{}}
	runs := map[string][]RunOutcome{}
	for _, t := range p.Tasks {
		path := filepath.Join(p.TaskDir(t), MarkerFile)
		m, err := readMarker(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			r.Missing = append(r.Missing, t)
			continue
		case err != nil:
			r.Refused = append(r.Refused, err.Error())
			continue
		case m.Plan != id:
			r.Refused = append(r.Refused, fmt.Sprintf("%s: a marker of another plan (%s)", path, m.Plan[:12]))
			continue
		case m.Task != t:
			r.Refused = append(r.Refused, fmt.Sprintf("%s: the marker is task %d (%s seed %d), not %d", path, m.Task.Index, m.Task.Experiment, m.Task.Seed, t.Index))
			continue
		}
		r.Done++
		r.Nodes[m.Node.Hostname]++
		if !m.Faithful {
			var why []string
			for _, v := range m.Run.Variants {
				if v.Fidelity != "faithful" {
					why = append(why, v.CC+": "+firstLine(v.Status+" "+v.Fidelity))
				}
			}
			if m.Run.Error != "" {
				why = append(why, m.Run.Error)
			}
			r.Degraded = append(r.Degraded, TaskNote{Task: t, Node: m.Node.Hostname, Why: strings.Join(why, "; ")})
		}
		runs[t.Experiment] = append(runs[t.Experiment], m.Run)
	}
	for _, pe := range p.Experiments {
		exps, err := Find(p.Root, []string{pe.Name})
		if err != nil {
			return r, err
		}
		e := exps[0]
		o := newOutcome(e, p, map[string]string{"revision": p.Revision})
		if pr, err := runner.Prepare(filepath.Join(p.Root, e.File)); err == nil {
			o.Switch = pr.Exp.Switch != nil
		}
		o.Runs = runs[e.Name]
		slices.SortFunc(o.Runs, func(a, b RunOutcome) int { return int(a.Seed - b.Seed) })
		if len(o.Runs) == 0 {
			o.Error = "no task of this experiment has finished"
		}
		judge(e, o)
		r.Outcomes = append(r.Outcomes, o)
	}
	if docs != "" {
		if err := Publish(r.Outcomes, docs); err != nil {
			return r, err
		}
	}
	return r, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}
