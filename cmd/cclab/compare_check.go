package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"cclab/rundir"
)

// runCheck says whether two runs can be compared: a difference between
// them is their laws' only when they share topology, workload and seed
// (rundir.Identity).
type runCheck struct {
	A []rundir.Identity `json:"a_runs"`
	B []rundir.Identity `json:"b_runs"`
	// Differs names what differs: "topology", "workload", "seed", or
	// "unknown" when a side has no run.json to tell.
	Differs []string `json:"differs"`
	// Details says how, one line each.
	Details []string `json:"details"`
	// Comparable: topology and workload are the same (a seed that drew
	// the same flows does not matter).
	Comparable bool `json:"comparable"`
	// Forced: compared with --force although not comparable.
	Forced bool `json:"forced"`
}

// checkRuns reads both sides' identities and says what differs.
func checkRuns(dirA, dirB string) (*runCheck, error) {
	c := &runCheck{}
	var err error
	if c.A, err = sideIdentities("A", dirA, c); err != nil {
		return nil, err
	}
	if c.B, err = sideIdentities("B", dirB, c); err != nil {
		return nil, err
	}
	if len(c.A) > 0 && len(c.B) > 0 {
		// Within one side every variant shares these by construction;
		// a side that does not is a mix of runs.
		ref := c.A[0]
		for _, x := range append(c.A[1:], c.B...) {
			c.compare(ref, x)
		}
	}
	c.Comparable = !c.has("topology") && !c.has("workload") && !c.has("unknown")
	return c, nil
}

// sideIdentities reads one side; a directory without run.json leaves the
// check unknown rather than failing (an analysis of captures alone).
func sideIdentities(side, dir string, c *runCheck) ([]rundir.Identity, error) {
	ids, err := rundir.Identities(dir)
	if errors.Is(err, os.ErrNotExist) {
		c.note("unknown", fmt.Sprintf("%s (%s) has no run.json: its topology, workload and seed cannot be checked", side, dir))
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", dir, err)
	}
	return ids, nil
}

// compare notes how x differs from ref.
func (c *runCheck) compare(ref, x rundir.Identity) {
	if ref.TopologySHA256 != x.TopologySHA256 {
		c.note("topology", fmt.Sprintf("topology: %s is %s (sha256 %.12s), %s is %s (sha256 %.12s)",
			ref.Dir, ref.Topology, ref.TopologySHA256, x.Dir, x.Topology, x.TopologySHA256))
	}
	sameFlows := ref.WorkloadSHA256 == x.WorkloadSHA256
	switch {
	case ref.WorkloadSHA256 == "" || x.WorkloadSHA256 == "":
		c.note("unknown", fmt.Sprintf("workload: %s or %s has no workload_flows in run.json: the workloads cannot be checked", ref.Dir, x.Dir))
	case !sameFlows:
		c.note("workload", fmt.Sprintf("workload: %s ran %d flows of %q (sha256 %.12s), %s ran %d flows of %q (sha256 %.12s)",
			ref.Dir, ref.Flows, ref.Experiment, ref.WorkloadSHA256, x.Dir, x.Flows, x.Experiment, x.WorkloadSHA256))
	}
	if ref.Seed != x.Seed {
		d := fmt.Sprintf("seed: %s has %d, %s has %d", ref.Dir, ref.Seed, x.Dir, x.Seed)
		if sameFlows && ref.WorkloadSHA256 != "" {
			d += " (the same flows: the workload draws nothing at random)"
		}
		c.note("seed", d)
	}
}

func (c *runCheck) note(what, detail string) {
	if !c.has(what) {
		c.Differs = append(c.Differs, what)
	}
	c.Details = append(c.Details, detail)
}

func (c *runCheck) has(what string) bool { return slices.Contains(c.Differs, what) }

// refusal is the error for runs that are not comparable without --force.
func (c *runCheck) refusal() error {
	return fmt.Errorf("the runs differ in %s, so their difference is not their laws' alone:\n  %s\n--force compares them anyway (the output says they differ)",
		strings.Join(c.Differs, ", "), strings.Join(c.Details, "\n  "))
}

// print heads the terminal output: what the runs share, or a label when
// they differ.
func (c *runCheck) print(w io.Writer) {
	if len(c.Differs) == 0 {
		id := c.A[0]
		fmt.Fprintf(w, "same topology (%s), workload (%d flows) and seed (%d)\n", id.Topology, id.Flows, id.Seed)
		return
	}
	if c.Forced {
		fmt.Fprintf(w, "NOT LIKE FOR LIKE (--force): the runs differ in %s; the differences below are not the laws' alone\n", strings.Join(c.Differs, ", "))
	}
	for _, d := range c.Details {
		fmt.Fprintf(w, "  %s\n", d)
	}
}
