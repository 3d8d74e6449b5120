package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"cclab/orchestrator/fidelity"
	"cclab/rundir"
)

// verdictStage judges the emulation's fidelity, writes flows.csv and
// fills run.json's summary (runVariant writes run.json after the
// teardown, with every stage's time).
type verdictStage struct{ *variantRun }

func (verdictStage) Name() string { return "verdict" }

func (r verdictStage) Start(ctx context.Context) error {
	p, rj := r.p, &r.rj
	rj.Fidelity = fidelity.Judge(fidelity.Inputs{
		Health: rj.Health, Engine: string(r.net.DelayEngine), Line: r.lineStats, MinDelay: time.Duration(rj.Delay.MinNs),
		Calibration: rj.Calibration, Base: r.laws.base,
		CPUQueue: rj.CPUQueue, Path: longestPath(p.Plan, rj.Calibration), Lossless: r.lossless,
	}, fidelity.DefaultLimits())
	rj.markInterrupted(ctx)
	fmt.Fprintf(r.opt.Log, "[%s] fidelity: %s\n", r.v.CC, rj.Fidelity)
	if r.runErr != nil && r.results == nil {
		return r.runErr
	}
	rs, err := rows(p.Plan, r.fr, r.v.Flows, r.results)
	if err != nil {
		return err
	}
	if err := rundir.WriteFlows(filepath.Join(r.dir, rundir.FlowsCSV), rs); err != nil {
		return err
	}
	sum := summarise(r.v.CC, r.dir, rs)
	sum.CaptureDrops = rj.CaptureDrops
	sum.CPUSaturated = rj.Health.CPU.SaturatedShare
	sum.Fidelity = rj.Fidelity.Verdict
	sum.FidelityReasons = rj.Fidelity.Reasons
	if r.rtt != nil {
		sum.RTTMedianNs = r.rtt.MedianNs
	}
	rj.Summary = sum
	rj.Flows = rundir.FlowCounts{Total: sum.Flows, OK: sum.OK, Failed: sum.Failed}
	rj.Finished = time.Now().UTC().Format(time.RFC3339Nano)
	if r.runErr != nil {
		rj.Errors = append(rj.Errors, r.runErr.Error())
	}
	r.sum, r.summarised = sum, true
	return nil
}

// Stop has nothing to undo.
func (verdictStage) Stop(context.Context) error { return nil }
