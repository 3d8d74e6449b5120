package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"cclab/kmod/lawload"
	"cclab/orchestrator/capture"
	"cclab/orchestrator/cpuqueue"
	"cclab/orchestrator/delay"
	"cclab/orchestrator/delay/line"
	"cclab/orchestrator/fidelity"
	"cclab/orchestrator/flows"
	"cclab/orchestrator/health"
	"cclab/orchestrator/netbuild"
	"cclab/rundir"
	"cclab/tcopt/intswitch"
	"cclab/topology/ideal"
)

// variantRun is one variant's run as its stages share it: what the run
// was given, what each stage made for the next ones, and run.json.
type variantRun struct {
	p        *Prepared
	v        Variant
	dir      string
	opt      Options
	laws     *lawState
	switches *intswitch.Cache
	rj       RunJSON
	stamped  bool          // the switch stamps INT options on this variant's flows
	fr       ideal.Framing // the segments' framing (TCP timestamps, INT option)

	// build
	net       *netbuild.Network
	cpuProbe  *cpuqueue.Probe
	dl        *delay.Server
	lineStats *line.Stats // set when the delay line stopped
	hosts     map[string]flows.Host
	ports     []capture.Port
	// calibrate
	regs map[string]lawload.Params // the eBPF laws registered, with their parameters
	rtt  *health.RTT
	// attach
	capt    *capture.Session
	events  *linkEvents
	exts    []Extension // the extensions started, until collect stops them
	env     *Env
	zero    int64 // the workload's time zero, CLOCK_MONOTONIC ns
	sampler *health.Sampler
	// workload
	results []flows.Result
	runErr  error // the workload's error: the run still records what it did
	// collect
	lossless *fidelity.Lossless // a lossless run's pauses and drops (nil: lossy)
	// verdict
	sum        Summary
	summarised bool // verdict wrote flows.csv and filled run.json
}

// runVariant runs one variant in its stages (stage.go) and writes its run
// directory: flows.csv, run.json with each stage's time. Interrupted before
// the end, the directory still says what happened: run.json with the
// marker and whatever was recorded by then.
func runVariant(ctx context.Context, p *Prepared, v Variant, dir string, opt Options, laws *lawState, switches *intswitch.Cache) (Summary, error) {
	r, err := newVariantRun(p, v, dir, opt, laws, switches)
	if err != nil {
		return Summary{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Summary{}, fmt.Errorf("run directory: %w", err)
	}
	times, err := runStages(ctx, []stage{
		buildStage{r}, calibrateStage{r}, attachStage{r}, workloadStage{r}, collectStage{r}, verdictStage{r},
	})
	r.rj.Stages = times
	if !r.summarised {
		if err != nil && r.rj.markInterrupted(ctx) {
			r.rj.Finished = time.Now().UTC().Format(time.RFC3339Nano)
			r.rj.Errors = append(r.rj.Errors, err.Error())
			err = errors.Join(err, writeJSON(filepath.Join(dir, rundir.RunJSON), r.rj))
		}
		return r.sum, err
	}
	if err != nil { // only the teardown can fail once the verdict is in
		r.rj.Errors = append(r.rj.Errors, err.Error())
	}
	if werr := writeJSON(filepath.Join(dir, rundir.RunJSON), r.rj); werr != nil {
		return r.sum, werr
	}
	fmt.Fprintf(opt.Log, "[%s] %d flows: %d ok, %d failed; wrote %s\n", v.CC, r.sum.Flows, r.sum.OK, r.sum.Failed, dir)
	if r.runErr != nil {
		return r.sum, r.runErr
	}
	return r.sum, err
}

// newVariantRun starts run.json with what is known before anything runs.
func newVariantRun(p *Prepared, v Variant, dir string, opt Options, laws *lawState, switches *intswitch.Cache) (*variantRun, error) {
	rj := RunJSON{ID: string(opt.ID), Variant: v.CC, Started: time.Now().UTC().Format(time.RFC3339Nano),
		Seed: p.Exp.Seed, Experiment: ExperimentJSON{Experiment: p.Exp, Source: string(p.Source), SHA256: sourceSHA256(string(p.Source))},
		Topology: p.Plan, Hosts: HostOptions(p.Exp.Hosts), Kernel: ThisKernel(), Node: ThisNode(100 * time.Millisecond), Versions: opt.Versions,
		Workload: v.Flows, CC: map[string]rundir.CC{}, Extensions: map[string]any{}}
	rj.Skipped = p.Skipped
	losslessHosts(&rj.Hosts, p.Exp)
	var err error
	if rj.Hosts.DelayEngine, err = delay.ParseEngine(p.Exp.Emulation.DelayEngine); err != nil {
		return nil, err
	}
	var flowCCs []string
	for _, f := range v.Flows {
		if !slices.Contains(flowCCs, f.CC) {
			flowCCs = append(flowCCs, f.CC)
		}
	}
	stamped := stampsINT(p.Exp, flowCCs)
	fr := framing(rj.Hosts.TCPTimestamps, stamped)
	rj.Framing = rundir.Framing{MSS: fr.MSS, HeaderBytes: fr.HeaderBytes}
	for _, f := range v.Flows {
		c := rj.CC[f.CC]
		c.Flows++
		rj.CC[f.CC] = c
	}
	return &variantRun{p: p, v: v, dir: dir, opt: opt, laws: laws, switches: switches, rj: rj, stamped: stamped, fr: fr}, nil
}

// stopLine stops the delay line once, keeping its statistics.
func (r *variantRun) stopLine() {
	if r.dl != nil && r.lineStats == nil {
		st := r.dl.Stop()
		r.lineStats = &st
	}
}

// stopExtensions stops the started extensions in reverse order, recording
// what they return in run.json.
func (r *variantRun) stopExtensions(ctx context.Context) {
	stopAll(ctx, r.exts, &r.rj)
	r.exts = nil
}
