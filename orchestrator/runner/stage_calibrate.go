package runner

import (
	"context"
	"slices"

	"cclab/kmod/lawload"
	"cclab/orchestrator/calibrate"
	"cclab/orchestrator/experiment"
	"cclab/orchestrator/health"
	"cclab/rundir"
)

// calibrateStage measures the paths, registers the laws with what the
// first calibration gives them, and takes the noise floors (the hosts'
// RTT and the CPU queue probe's idle RTT) before any traffic.
type calibrateStage struct{ *variantRun }

func (calibrateStage) Name() string { return "calibrate" }

func (r calibrateStage) Start(ctx context.Context) error {
	p, opt, rj := r.p, r.opt, &r.rj
	// Each class of path, idle and loaded; the first calibration gives
	// the laws their time constants.
	if experiment.On(p.Exp.Emulation.Calibrate, true) {
		copt := opt.Calibration
		copt.Hosts, copt.Log = r.hosts, prefixed{opt.Log, "[" + r.v.CC + "] "}
		var err error
		if rj.Calibration, err = calibrate.Run(ctx, p.Plan, copt); err != nil {
			return err
		}
	}
	if err := r.laws.register(ctx, p, r.v.CC, rj.Calibration, opt); err != nil {
		return err
	}
	if err := r.laws.claim(p, opt); err != nil {
		return err
	}
	rj.Derived, rj.DerivedFrom, rj.DerivedApplied = r.laws.derived, r.laws.baseVariant, r.laws.applied
	if err := calibrate.SetPathHops(p.Plan, opt.Laws); err != nil {
		return err
	}
	var err error
	if r.regs, err = registeredLaws(opt.Laws); err != nil {
		return err
	}
	for name, c := range rj.CC {
		if ps, ok := r.laws.modules[name]; ok {
			c.Params, c.Build = ps.Map(), rundir.BuildKmod
		} else if ps, ok := moduleInForce(name); ok {
			c.Params, c.Build = ps.Map(), rundir.BuildKmod
		} else if slices.Contains(lawload.Laws(), name) && lawload.ForeignModule(name) {
			c.Build = rundir.BuildForeign
		} else if ps, ok := r.regs[name]; ok {
			c.Params, c.Build = ps.Map(), rundir.BuildEBPF
		}
		rj.CC[name] = c
	}

	// The noise floor: between the first and the last host (the farthest
	// apart in the generated topologies), before any traffic.
	hs := p.Plan.Hosts()
	a, b := hs[0].Name, hs[len(hs)-1].Name
	if r.rtt, err = health.PingPong(ctx, a, r.hosts[a], b, r.hosts[b], rttPort, opt.RTTSamples); err != nil {
		rj.Errors = append(rj.Errors, err.Error())
	}
	// The CPU queue probe's idle RTT, before anything but the fabric's
	// programs runs.
	if r.cpuProbe != nil {
		if err := r.cpuProbe.Idle(ctx, 100); err != nil {
			return err
		}
	}
	return nil
}

// Stop has nothing to undo: the laws stay registered for the run's other
// variants (Run releases them).
func (calibrateStage) Stop(context.Context) error { return nil }
