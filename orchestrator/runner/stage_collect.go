package runner

import (
	"context"

	"cclab/orchestrator/delay"
)

// collectStage stops what watched the workload, in the order that
// matters: the extensions first (their last samples are of the workload),
// then the health sampler, the CPU queue probe, the delay line and the
// captures, and keeps what each recorded.
type collectStage struct{ *variantRun }

func (collectStage) Name() string { return "collect" }

func (r collectStage) Start(ctx context.Context) error {
	rj := &r.rj
	r.stopExtensions(ctx)
	rj.Health = r.sampler.Stop()
	r.sampler = nil
	rj.Health.RTT = r.rtt
	if r.cpuProbe != nil {
		if cq, err := r.cpuProbe.Stop(); err != nil {
			rj.Errors = append(rj.Errors, err.Error())
		} else {
			rj.CPUQueue = &cq
		}
	}
	r.stopLine()
	served := r.net.Delay
	if r.dl != nil {
		served = r.dl.Placement() // the delays in force at the end
	}
	rj.Delay = delay.NewReport(served, r.net.DelayEngine, r.lineStats)
	if r.capt != nil {
		stats, err := r.capt.Stop()
		r.capt = nil
		if err != nil {
			rj.Errors = append(rj.Errors, err.Error())
		}
		rj.Capture = stats
		for _, s := range stats {
			rj.CaptureDrops += s.Drops
		}
	}
	return nil
}

// Stop has nothing to undo: Start stopped what it collected.
func (collectStage) Stop(context.Context) error { return nil }
