package runner

import (
	"context"
	"fmt"
	"time"

	"cclab/orchestrator/capture"
	"cclab/orchestrator/experiment"
	"cclab/orchestrator/flows"
)

// attachStage starts the captures and the extensions (the switch's
// telemetry, watch, link events, law traces, the caller's) and fixes the
// workload's time zero.
type attachStage struct{ *variantRun }

func (attachStage) Name() string { return "attach" }

func (r attachStage) Start(ctx context.Context) error {
	p, rj := r.p, &r.rj
	if experiment.On(p.Exp.Capture.Enabled, true) {
		var err error
		if r.capt, err = capture.Start(r.dir, r.ports, int(p.Exp.Capture.Snaplen)); err != nil {
			return err
		}
	}
	r.zero = flows.Monotonic() + int64(20*time.Millisecond)
	rj.ZeroNs = r.zero
	rj.ClockOffsetNs = flows.Realtime() - flows.Monotonic()
	r.env = &Env{ID: r.opt.ID, Dir: r.dir, CC: r.v.CC, Network: r.net, Plan: p.Plan, Flows: r.v.Flows, Hosts: r.hosts, ZeroNs: r.zero}
	for _, x := range r.extensions() {
		if err := x.Start(ctx, r.env); err != nil {
			return fmt.Errorf("extension %s: %w", x.Name(), err)
		}
		r.exts = append(r.exts, x)
	}
	// An extension may take seconds to start (loading and verifying BPF
	// programs): the workload's time zero must not pass meanwhile, or
	// every flow starts late and long flows past their stop carry nothing.
	if now := flows.Monotonic(); now+int64(5*time.Millisecond) > r.zero {
		r.zero = now + int64(20*time.Millisecond)
		rj.ZeroNs, r.env.ZeroNs = r.zero, r.zero
	}
	for _, x := range r.exts {
		if b, ok := x.(beginner); ok {
			b.Begin(r.zero)
		}
	}
	return nil
}

// extensions are the variant's extensions, in the order they start.
func (r attachStage) extensions() []Extension {
	p := r.p
	var exts []Extension
	var tel *telemetry
	if p.Exp.Switch != nil {
		tel = &telemetry{cfg: *p.Exp.Switch, stampINT: r.stamped, echoPinDir: r.opt.Laws.PinDir, switches: r.switches}
		exts = append(exts, tel)
		if p.Exp.Switch.PFC != nil {
			// After the switch, so that it stops first: no pause is
			// applied to a port whose switch is gone.
			exts = append(exts, &losslessRun{cfg: pfcSettings(p.Exp.Switch.PFC, p.Plan), lineCPU: r.dl.LineCPU(), tel: tel, out: &r.lossless})
		}
	}
	if p.Exp.Watch > 0 {
		exts = append(exts, &watchRecorder{every: p.Exp.Watch.D(), tel: tel})
	}
	if ch := p.Exp.LinkChanges(); len(ch) > 0 {
		r.events = &linkEvents{changes: ch, tel: tel, line: r.dl}
		exts = append(exts, r.events)
	}
	if _, isLaw := r.regs[r.v.CC]; p.Exp.Trace && isLaw {
		exts = append(exts, &lawTrace{opts: r.opt.Laws})
	}
	if r.opt.Extensions != nil {
		exts = append(exts, r.opt.Extensions()...)
	}
	if p.Exp.Profile {
		// Last, so that its perf starts when everything it watches runs.
		exts = append(exts, &profiler{})
	}
	return exts
}

// Stop stops what collect did not: the extensions, then the captures.
func (r attachStage) Stop(ctx context.Context) error {
	r.stopExtensions(ctx)
	if r.capt != nil {
		r.capt.Stop()
		r.capt = nil
	}
	return nil
}
