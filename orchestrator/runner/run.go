package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"cclab/internal/rcuexpedite"
	"cclab/internal/runid"
	"cclab/kmod/lawload"
	"cclab/orchestrator/calibrate"
	"cclab/orchestrator/capture"
	"cclab/orchestrator/cpuqueue"
	"cclab/orchestrator/delay"
	"cclab/orchestrator/delay/line"
	"cclab/orchestrator/experiment"
	"cclab/orchestrator/fidelity"
	"cclab/orchestrator/flows"
	"cclab/orchestrator/health"
	"cclab/orchestrator/netbuild"
	"cclab/rundir"
	"cclab/tcopt/intswitch"
	"cclab/topology"
)

// Options configure Run.
type Options struct {
	Out      string   // parent of run directories (default "results")
	ID       runid.ID // default: a fresh id
	Log      io.Writer
	Versions map[string]string
	// Extensions returns the extensions of one variant (fresh ones for
	// each, since each variant builds its own network).
	Extensions func() []Extension
	// RTTSamples is the length of the noise-floor ping-pong (default 100).
	RTTSamples int
	// Laws says where cclab's eBPF laws are registered (zero: the real
	// pin directory; tests register under names of their own).
	Laws lawload.Options
	// Strict fails the run when a variant's fidelity verdict is degraded
	// (as the experiment's emulation.strict does).
	Strict bool
	// Calibration overrides the calibration's sample counts (tests).
	Calibration calibrate.Options
}

// Result is what a run produced.
type Result struct {
	ID      runid.ID  `json:"id"`
	Dir     string    `json:"dir"` // the run directory, or the parent of the compared ones
	Runs    []Summary `json:"runs"`
	Skipped []Skip    `json:"skipped,omitempty"` // compared names left out (skip_missing), and why
}

// Ports the runner uses inside the hosts.
const (
	flowPort = 5201
	rttPort  = 5999
)

// Run runs every variant of a prepared experiment. With one variant the
// run directory is OUT/<id>; when comparing, OUT/<id>/<cc> for each and
// OUT/<id>/compare.json. On cancellation it tears down and returns the
// context's error.
func Run(ctx context.Context, p *Prepared, opt Options) (*Result, error) {
	if opt.Out == "" {
		opt.Out = "results"
	}
	if opt.ID == "" {
		opt.ID = runid.New()
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	if opt.RTTSamples == 0 {
		opt.RTTSamples = 100
	}
	res := &Result{ID: opt.ID, Dir: filepath.Join(opt.Out, string(opt.ID)), Skipped: p.Skipped}
	if err := removeStaleDir(res.Dir); err != nil {
		return nil, err
	}
	// Building, attaching and tearing down wait for RCU grace periods
	// hundreds of times; expedited, a variant's set-up and teardown take
	// seconds less (internal/rcuexpedite).
	if h, err := rcuexpedite.System.Hold(opt.ID); err != nil {
		fmt.Fprintf(opt.Log, "rcu_expedited not set, set-up and teardown will be slower: %v\n", err)
	} else {
		defer func() {
			if err := h.Release(); err != nil {
				fmt.Fprintf(opt.Log, "rcu_expedited: %v\n", err)
			}
		}()
	}
	laws := &lawState{}
	defer laws.release(opt.Log)
	// Every variant attaches the same INT switch to its own fabric: its
	// programs are verified once per run (about 2 s each time otherwise).
	switches := &intswitch.Cache{}
	defer switches.Close()
	var degraded []string
	begin := time.Now()
	for i, v := range p.Variants {
		dir := res.Dir
		if len(p.Exp.Compare) > 0 {
			dir = filepath.Join(res.Dir, v.CC)
		}
		s, err := runVariant(ctx, p, v, dir, opt, laws, switches)
		if err != nil && ctx.Err() != nil {
			// The signal, not the context's "canceled": run.json says it too.
			return res, fmt.Errorf("run %s (%s): %w; torn down, %s is marked interrupted", opt.ID, v.CC, context.Cause(ctx), dir)
		}
		if err != nil {
			return res, fmt.Errorf("run %s (%s): %w", opt.ID, v.CC, err)
		}
		if left := len(p.Variants) - i - 1; left > 0 {
			fmt.Fprintf(opt.Log, "[%s] variant %d of %d done after %s; about %s to go\n", v.CC, i+1, len(p.Variants),
				time.Since(begin).Round(time.Second), eta(time.Since(begin), i+1, left))
		}
		res.Runs = append(res.Runs, s)
		if s.Fidelity != fidelity.Faithful {
			degraded = append(degraded, v.CC)
		}
	}
	if len(p.Exp.Compare) > 0 {
		if err := writeJSON(filepath.Join(res.Dir, "compare.json"), res); err != nil {
			return res, err
		}
	}
	if len(degraded) > 0 && (opt.Strict || p.Exp.Emulation.Strict) {
		return res, fmt.Errorf("run %s: strict: the emulation was degraded for %s (run.json's fidelity says why)", opt.ID, strings.Join(degraded, ", "))
	}
	return res, nil
}

// lawState is what the variants of one run share: the laws are registered
// once, with the parameters derived from the first calibration, so that
// every variant's laws get the same ones.
type lawState struct {
	registered bool
	// modules: the laws that ran as kernel modules, with the parameters
	// written into them.
	modules     map[string]lawload.Params
	base        *calibrate.Result
	baseVariant string
	derived     *calibrate.Derived
	// applied: the laws run with derived; false when the experiment has
	// no `laws:` section and uses laws registered by someone else.
	applied bool
	// hold claims the registrations the run's flows use (claim).
	hold *lawload.ClaimHold
}

// register registers the experiment's laws once, with its `laws:`
// settings and what cal derives (unless the file pins it).
func (ls *lawState) register(ctx context.Context, p *Prepared, v string, cal *calibrate.Result, opt Options) error {
	if ls.registered {
		return nil
	}
	if len(p.Laws) == 0 && len(p.VariantNames) == 0 {
		return ls.recordOnly(p, v, cal, opt)
	}
	settings := p.Exp.LawSettings()
	if cal != nil {
		d, err := calibrate.Derive(cal, p.Plan, p.derivedLaws(), p.Exp.Laws)
		if err != nil {
			return err
		}
		ls.base, ls.baseVariant, ls.derived = cal, v, d
		settings = append(settings, d.Settings()...)
	}
	modules, foreign, ebpfLaws := splitBuilds(p.Laws)
	if err := checkForeign(foreign, p.Exp.LawSettings(), opt); err != nil {
		return err
	}
	if err := ls.applyToModules(modules, settings, opt); err != nil {
		return err
	}
	if len(ebpfLaws) > 0 {
		if len(modules)+len(foreign) > 0 {
			// Only what concerns them: a "law.name" of a module's law
			// would name a law that is not being registered.
			settings = lawload.SettingsFor(ebpfLaws, settings)
		}
		fmt.Fprintf(opt.Log, "registering %v with %v\n", ebpfLaws, settings)
		replaced, err := lawload.Reconcile(ctx, ebpfLaws, settings, opt.Laws)
		if err != nil {
			return fmt.Errorf("register laws: %w", err)
		}
		if len(replaced) > 0 {
			fmt.Fprintf(opt.Log, "re-registered %v: they were registered with other parameters or by another build (laws of another build that hold the shared maps are unregistered)\n", replaced)
		}
	}
	// Each variant: its law under its own name, with the same settings
	// and derived parameters, then its own.
	var derived []string
	if ls.derived != nil {
		derived = ls.derived.Settings()
	}
	for _, name := range p.VariantNames {
		v := p.Exp.Variants[name]
		vs := lawload.SettingsFor([]string{v.Law}, append(p.Exp.LawSettings(), derived...))
		vs = append(vs, p.Exp.VariantSettings(name)[len(p.Exp.LawSettings()):]...)
		vopt := opt.Laws
		vopt.Names = map[string]string{v.Law: name}
		fmt.Fprintf(opt.Log, "registering variant %s (%s) with %v\n", name, v.Law, vs)
		if _, err := lawload.Reconcile(ctx, []string{v.Law}, vs, vopt); err != nil {
			return fmt.Errorf("register variant %s: %w", name, err)
		}
	}
	ls.registered, ls.applied = true, cal != nil
	return nil
}

// recordOnly is register for an experiment without a `laws:` section: the
// run does not register cclab's laws it uses, so they keep the parameters
// they were loaded with. What the calibration would give them is derived
// all the same, recorded as not applied, and said on the log.
func (ls *lawState) recordOnly(p *Prepared, v string, cal *calibrate.Result, opt Options) error {
	ls.registered = true
	var used []string
	for _, vr := range p.Variants {
		if slices.Contains(lawload.Laws(), vr.CC) && !slices.Contains(used, vr.CC) {
			used = append(used, vr.CC)
		}
	}
	// Without a laws: section nothing is re-registered, so a law of an
	// older cclab build would run its old code: say so.
	if regs, err := lawload.List(opt.Laws); err == nil {
		for _, r := range regs {
			if slices.Contains(used, r.Law) && r.Stale() {
				fmt.Fprintf(opt.Log, "warning: %s is registered by another cclab build and keeps its code (no `laws:` section in the experiment): `cclab cc unload %s` to run this build's\n", r.Name, r.Name)
			}
		}
	}
	if cal == nil || len(used) == 0 {
		return nil
	}
	d, err := calibrate.Derive(cal, p.Plan, used, p.Exp.Laws)
	if err != nil {
		return err
	}
	ls.base, ls.baseVariant, ls.derived = cal, v, d
	fmt.Fprintf(opt.Log, "calibration: %v keep the parameters they were registered with (no `laws:` section in the experiment); the calibration gives %v (run.json derived_params, not applied)\n",
		used, d.Settings())
	return nil
}

// HostOptions turns the experiment's host settings into build options.
func HostOptions(h experiment.Hosts) netbuild.Options {
	o := netbuild.DefaultOptions()
	o.TCPTimestamps = experiment.On(h.TCPTimestamps, true)
	if h.ECN != nil {
		o.ECN = 0
		if *h.ECN {
			o.ECN = 1
		}
	}
	o.GSO = experiment.On(h.GSO, true)
	o.TSO = experiment.On(h.TSO, true)
	o.GRO = experiment.On(h.GRO, true)
	o.GSOMaxSize = int(h.GSOMaxSize)
	o.InitRwnd = int(h.InitRwnd)
	o.NICQueues = h.NICQueues
	return o
}

func runVariant(ctx context.Context, p *Prepared, v Variant, dir string, opt Options, laws *lawState, switches *intswitch.Cache) (sum Summary, err error) {
	log := opt.Log
	rj := RunJSON{ID: string(opt.ID), Variant: v.CC, Started: time.Now().UTC().Format(time.RFC3339Nano),
		Seed: p.Exp.Seed, Experiment: ExperimentJSON{Experiment: p.Exp, Source: string(p.Source), SHA256: sourceSHA256(string(p.Source))},
		Topology: p.Plan, Hosts: HostOptions(p.Exp.Hosts), Kernel: ThisKernel(), Node: ThisNode(100 * time.Millisecond), Versions: opt.Versions,
		Workload: v.Flows, CC: map[string]rundir.CC{}, Extensions: map[string]any{}}
	rj.Skipped = p.Skipped
	if rj.Hosts.DelayEngine, err = delay.ParseEngine(p.Exp.Emulation.DelayEngine); err != nil {
		return sum, err
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
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return sum, fmt.Errorf("run directory: %w", err)
	}
	// Interrupted before the end, the directory still says what happened:
	// run.json with the marker and whatever was recorded by then.
	wrote := false
	defer func() {
		if err != nil && !wrote && rj.markInterrupted(ctx) {
			rj.Finished = time.Now().UTC().Format(time.RFC3339Nano)
			rj.Errors = append(rj.Errors, err.Error())
			err = errors.Join(err, writeJSON(filepath.Join(dir, rundir.RunJSON), rj))
		}
	}()
	fmt.Fprintf(log, "[%s] building %s (%d nodes, %d links)\n", v.CC, p.Plan.Name, len(p.Plan.Nodes), len(p.Plan.Links))
	net, err := netbuild.Up(ctx, opt.ID, p.Plan, rj.Hosts)
	if err != nil {
		return sum, err
	}
	defer func() {
		if derr := net.Down(context.WithoutCancel(ctx)); derr != nil && err == nil {
			err = fmt.Errorf("tear down: %w", derr)
		}
	}()
	rj.BuildTiming = net.Timing

	// The CPU queue probe: a chain as long as the longest path, made
	// before the delay line steers packet work, so that its packets are
	// processed where the fabric's are.
	hs := p.Plan.Hosts()
	var cpuProbe *cpuqueue.Probe
	if lp := longestPath(p.Plan, nil); lp.Switches > 0 || len(hs) >= 2 {
		if cpuProbe, err = cpuqueue.Attach(opt.ID, lp.Switches+1); err != nil {
			return sum, err
		}
		defer cpuProbe.Close()
	}

	var steer []string
	if experiment.On(p.Exp.Emulation.Steer, true) {
		steer = net.Namespaces()
		if cpuProbe != nil {
			steer = append(steer, cpuProbe.Namespaces()...)
		}
	}
	dl, err := net.ServeDelay(ctx, delay.ServeOptions{CPU: -1, Steer: steer})
	if err != nil {
		return sum, err
	}
	var lineStats *line.Stats
	stopLine := func() {
		if dl != nil && lineStats == nil {
			st := dl.Stop()
			lineStats = &st
		}
	}
	defer stopLine()

	hosts := map[string]flows.Host{}
	var ports []capture.Port
	for _, h := range p.Plan.Hosts() {
		hosts[h.Name] = flows.Host{Netns: net.Netns(h.Name), Addr: h.Addr}
		if port, _, ok := p.Plan.HostPort(h.Name); ok {
			ports = append(ports, capture.Port{Host: h.Name, Netns: net.Netns(h.Name), Iface: port.Iface})
		}
	}

	// Each class of path, idle and loaded; the first calibration gives
	// the laws their time constants.
	if experiment.On(p.Exp.Emulation.Calibrate, true) {
		copt := opt.Calibration
		copt.Hosts, copt.Log = hosts, prefixed{log, "[" + v.CC + "] "}
		if rj.Calibration, err = calibrate.Run(ctx, p.Plan, copt); err != nil {
			return sum, err
		}
	}
	if err := laws.register(ctx, p, v.CC, rj.Calibration, opt); err != nil {
		return sum, err
	}
	if err := laws.claim(p, opt); err != nil {
		return sum, err
	}
	rj.Derived, rj.DerivedFrom, rj.DerivedApplied = laws.derived, laws.baseVariant, laws.applied
	if err := calibrate.SetPathHops(p.Plan, opt.Laws); err != nil {
		return sum, err
	}
	regs, err := registeredLaws(opt.Laws)
	if err != nil {
		return sum, err
	}
	for name, c := range rj.CC {
		if ps, ok := laws.modules[name]; ok {
			c.Params, c.Build = ps.Map(), rundir.BuildKmod
		} else if ps, ok := moduleInForce(name); ok {
			c.Params, c.Build = ps.Map(), rundir.BuildKmod
		} else if slices.Contains(lawload.Laws(), name) && lawload.ForeignModule(name) {
			c.Build = rundir.BuildForeign
		} else if ps, ok := regs[name]; ok {
			c.Params, c.Build = ps.Map(), rundir.BuildEBPF
		}
		rj.CC[name] = c
	}

	// The noise floor: between the first and the last host (the farthest
	// apart in the generated topologies), before any traffic.
	a, b := hs[0].Name, hs[len(hs)-1].Name
	rtt, err := health.PingPong(ctx, a, hosts[a], b, hosts[b], rttPort, opt.RTTSamples)
	if err != nil {
		rj.Errors = append(rj.Errors, err.Error())
	}

	// The CPU queue probe's idle RTT, before anything but the fabric's
	// programs runs.
	if cpuProbe != nil {
		if err := cpuProbe.Idle(ctx, 100); err != nil {
			return sum, err
		}
	}

	var capt *capture.Session
	if experiment.On(p.Exp.Capture.Enabled, true) {
		if capt, err = capture.Start(dir, ports, int(p.Exp.Capture.Snaplen)); err != nil {
			return sum, err
		}
	}
	zero := flows.Monotonic() + int64(20*time.Millisecond)
	rj.ZeroNs = zero
	rj.ClockOffsetNs = flows.Realtime() - flows.Monotonic()
	var exts []Extension
	var tel *telemetry
	if p.Exp.Switch != nil {
		tel = &telemetry{cfg: *p.Exp.Switch, stampINT: stamped, echoPinDir: opt.Laws.PinDir, switches: switches}
		exts = append(exts, tel)
	}
	if p.Exp.Watch > 0 {
		exts = append(exts, &watchRecorder{every: p.Exp.Watch.D(), tel: tel})
	}
	var events *linkEvents
	if ch := p.Exp.LinkChanges(); len(ch) > 0 {
		events = &linkEvents{changes: ch, tel: tel, line: dl}
		exts = append(exts, events)
	}
	if _, isLaw := regs[v.CC]; p.Exp.Trace && isLaw {
		exts = append(exts, &lawTrace{opts: opt.Laws})
	}
	if opt.Extensions != nil {
		exts = append(exts, opt.Extensions()...)
	}
	env := &Env{ID: opt.ID, Dir: dir, CC: v.CC, Network: net, Plan: p.Plan, Flows: v.Flows, Hosts: hosts, ZeroNs: zero}
	var started []Extension
	for _, x := range exts {
		if err := x.Start(ctx, env); err != nil {
			stopAll(ctx, started, &rj)
			if capt != nil {
				capt.Stop()
			}
			return sum, fmt.Errorf("extension %s: %w", x.Name(), err)
		}
		started = append(started, x)
	}
	// An extension may take seconds to start (loading and verifying BPF
	// programs): the workload's time zero must not pass meanwhile, or
	// every flow starts late and long flows past their stop carry nothing.
	if now := flows.Monotonic(); now+int64(5*time.Millisecond) > zero {
		zero = now + int64(20*time.Millisecond)
		rj.ZeroNs, env.ZeroNs = zero, zero
	}
	for _, x := range started {
		if b, ok := x.(beginner); ok {
			b.Begin(zero)
		}
	}
	// Health covers the workload only, not the CPU that loading the
	// extensions' BPF programs took.
	if cpuProbe != nil {
		cpuProbe.Start()
	}
	sopt := health.SamplerOptions{Interval: 100 * time.Millisecond, Namespaces: net.Namespaces(), PacketCPUs: dl.PacketCPUs()}
	if events != nil {
		// A link the events changed carries what its rate then allows.
		sopt.RateInForce = events.app.PeakRate
	}
	sampler := health.StartSampler(linkEnds(p.Plan, net), sopt)

	specs := make([]flows.Spec, len(v.Flows))
	for i, f := range v.Flows {
		specs[i] = flows.Spec{ID: f.ID, Src: f.Src, Dst: f.Dst, Size: f.Size, Start: f.Start, Stop: f.Stop, CC: f.CC, Tool: f.Tool}
	}
	var done atomic.Int64
	stopProgress := progress(log, v.CC, len(specs), planEnd(specs), &done)
	results, runErr := flows.Run(ctx, specs, flows.Options{
		EchoCC: echoCCs(regs),
		Hosts:  hosts, Port: flowPort, Timeout: p.Exp.Timeout.D(), ZeroNs: zero,
		Progress:  func(n, _ int) { done.Store(int64(n)) },
		Iperf3Dir: filepath.Join(dir, "iperf3"),
		RecordPID: func(pid int) error { return netbuild.RecordPID(opt.ID, pid) },
		Priority:  func(id int) uint32 { return netbuild.NICClass(id, rj.Hosts.NICQueues) },
	})
	stopProgress()
	time.Sleep(20 * time.Millisecond) // let the last ACKs and FINs reach the captures

	stopAll(ctx, started, &rj)
	rj.Health = sampler.Stop()
	rj.Health.RTT = rtt
	if cpuProbe != nil {
		cq, err := cpuProbe.Stop()
		if err != nil {
			rj.Errors = append(rj.Errors, err.Error())
		} else {
			rj.CPUQueue = &cq
		}
	}
	stopLine()
	served := net.Delay
	if dl != nil {
		served = dl.Placement() // the delays in force at the end
	}
	rj.Delay = delay.NewReport(served, net.DelayEngine, lineStats)
	rj.Fidelity = fidelity.Judge(fidelity.Inputs{
		Health: rj.Health, Engine: string(net.DelayEngine), Line: lineStats, MinDelay: time.Duration(rj.Delay.MinNs),
		Calibration: rj.Calibration, Base: laws.base,
		CPUQueue: rj.CPUQueue, Path: longestPath(p.Plan, rj.Calibration),
	}, fidelity.DefaultLimits())
	rj.markInterrupted(ctx)
	fmt.Fprintf(log, "[%s] fidelity: %s\n", v.CC, rj.Fidelity)
	if capt != nil {
		stats, cerr := capt.Stop()
		if cerr != nil {
			rj.Errors = append(rj.Errors, cerr.Error())
		}
		rj.Capture = stats
		for _, s := range stats {
			rj.CaptureDrops += s.Drops
		}
	}
	if runErr != nil && results == nil {
		return sum, runErr
	}

	rs, err := rows(p.Plan, fr, v.Flows, results)
	if err != nil {
		return sum, err
	}
	if err := rundir.WriteFlows(filepath.Join(dir, rundir.FlowsCSV), rs); err != nil {
		return sum, err
	}
	sum = summarise(v.CC, dir, rs)
	sum.CaptureDrops = rj.CaptureDrops
	sum.CPUSaturated = rj.Health.CPU.SaturatedShare
	sum.Fidelity = rj.Fidelity.Verdict
	sum.FidelityReasons = rj.Fidelity.Reasons
	if rtt != nil {
		sum.RTTMedianNs = rtt.MedianNs
	}
	rj.Summary = sum
	rj.Flows = rundir.FlowCounts{Total: sum.Flows, OK: sum.OK, Failed: sum.Failed}
	rj.Finished = time.Now().UTC().Format(time.RFC3339Nano)
	if runErr != nil {
		rj.Errors = append(rj.Errors, runErr.Error())
	}
	if err := writeJSON(filepath.Join(dir, rundir.RunJSON), rj); err != nil {
		return sum, err
	}
	wrote = true
	fmt.Fprintf(log, "[%s] %d flows: %d ok, %d failed; wrote %s\n", v.CC, sum.Flows, sum.OK, sum.Failed, dir)
	return sum, runErr
}

func stopAll(ctx context.Context, xs []Extension, rj *RunJSON) {
	for i := len(xs) - 1; i >= 0; i-- {
		out, err := xs[i].Stop(context.WithoutCancel(ctx))
		if err != nil {
			rj.Errors = append(rj.Errors, fmt.Sprintf("extension %s: %v", xs[i].Name(), err))
		}
		if out != nil {
			rj.Extensions[xs[i].Name()] = out
		}
	}
}

// prefixed writes each line with a prefix.
type prefixed struct {
	w      io.Writer
	prefix string
}

func (p prefixed) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, p.prefix+string(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// linkEnds lists the egress of both ends of every link.
func linkEnds(p *topology.Plan, net *netbuild.Network) []health.LinkEnd {
	var out []health.LinkEnd
	for _, l := range p.Links {
		for _, port := range []topology.Port{l.A, l.B} {
			out = append(out, health.LinkEnd{Node: port.Node, Netns: net.Netns(port.Node), Iface: port.Iface, ConfigBps: l.Rate.BitsPerSecond()})
		}
	}
	return out
}

// eta is the time left at the mean pace so far: left items after done in elapsed.
func eta(elapsed time.Duration, done, left int) time.Duration {
	if done <= 0 {
		return 0
	}
	return (elapsed / time.Duration(done) * time.Duration(left)).Round(time.Second)
}

// planEnd is when the workload's last flow starts or, for a long flow,
// stops (from time zero): the least the workload takes.
func planEnd(specs []flows.Spec) time.Duration {
	var end time.Duration
	for _, s := range specs {
		end = max(end, s.Start, s.Stop)
	}
	return end
}

// progress prints flows done/total and the elapsed time every second,
// against the time the workload plans (its last start or stop).
func progress(w io.Writer, cc string, total int, planned time.Duration, done *atomic.Int64) func() {
	begin := time.Now()
	stop := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				fmt.Fprintf(w, "[%s] flows %d/%d done, %.1fs\n", cc, done.Load(), total, time.Since(begin).Seconds())
				return
			case <-t.C:
				el := time.Since(begin)
				left := ""
				if planned > el {
					left = fmt.Sprintf(", the workload plans %.0fs more", (planned - el).Seconds())
				}
				fmt.Fprintf(w, "[%s] flows %d/%d done, %.1fs%s\n", cc, done.Load(), total, el.Seconds(), left)
			}
		}
	}()
	return func() {
		close(stop)
		<-finished
	}
}

// removeStaleDir refuses to overwrite a finished run, and removes what an
// interrupted run of the same id left (a directory without run.json, or
// one whose run.json is marked interrupted).
func removeStaleDir(dir string) error {
	if _, err := os.Stat(dir); err != nil {
		return nil
	}
	if holdsFinishedRun(dir) {
		return fmt.Errorf("run directory %s holds a finished run: pick another --run id or --out", dir)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove stale run directory: %w", err)
	}
	return nil
}

// longestPath is the path with the most switches: its calibrated loaded
// floor as its RTT, or its configured propagation RTT without a
// calibration.
func longestPath(plan *topology.Plan, cal *calibrate.Result) fidelity.Path {
	var lp fidelity.Path
	if cal != nil {
		for _, c := range cal.Classes {
			if c.Switches >= lp.Switches {
				lp = fidelity.Path{Switches: c.Switches, RTTNs: c.FloorNs}
			}
		}
		return lp
	}
	pds, err := plan.PathDelays()
	if err != nil {
		return lp
	}
	for _, pd := range pds {
		if pd.Switches > lp.Switches || (pd.Switches == lp.Switches && 2*int64(pd.OneWay) > lp.RTTNs) {
			lp = fidelity.Path{Switches: pd.Switches, RTTNs: 2 * int64(pd.OneWay)}
		}
	}
	return lp
}
