package netbuild

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"cclab/internal/runid"
	"cclab/orchestrator/cleanup"
	"cclab/orchestrator/delay"
	"cclab/topology"
)

// Open returns the Network of a run that is up (built by this or another
// process, e.g. `cclab topo up`), from the plan and options recorded in its
// state directory. It checks that every namespace of the plan exists.
func Open(id runid.ID) (*Network, error) {
	dir := id.StateDir()
	data, err := os.ReadFile(filepath.Join(dir, cleanup.PlanFile))
	if err != nil {
		return nil, fmt.Errorf("open run %s: %w", id, err)
	}
	var p topology.Plan
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("open run %s: %s: %w", id, cleanup.PlanFile, err)
	}
	n := &Network{ID: id, Plan: &p}
	if data, err := os.ReadFile(filepath.Join(dir, NetworkFile)); err == nil {
		var rec struct {
			Options Options `json:"options"`
			Timing  Timing  `json:"timing"`
		}
		if err := json.Unmarshal(data, &rec); err != nil {
			return nil, fmt.Errorf("open run %s: %s: %w", id, NetworkFile, err)
		}
		n.Options, n.Timing = rec.Options, rec.Timing
	} else {
		return nil, fmt.Errorf("open run %s: not completely built: %w", id, err)
	}
	for _, nd := range p.Nodes {
		if _, err := os.Stat(filepath.Join(cleanup.NetnsDir, n.Netns(nd.Name))); err != nil {
			return nil, fmt.Errorf("open run %s: namespace of %s: %w", id, nd.Name, err)
		}
	}
	// The placement is a function of the plan, and the engine of the
	// options and the kernel, as Up chose them: a process that serves
	// the line of a network another built (`cclab topo up`'s
	// supervisor) finds the same sinks and classes.
	pl, err := delay.Place(&p)
	if err != nil {
		return nil, fmt.Errorf("open run %s: %w", id, err)
	}
	if !pl.Empty() {
		if n.DelayEngine, err = n.Options.DelayEngine.Resolve(); err != nil {
			return nil, fmt.Errorf("open run %s: %w", id, err)
		}
		n.Delay = pl
	}
	return n, nil
}
