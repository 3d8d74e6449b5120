package runner

import (
	"context"
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
	"cclab/orchestrator/experiment"
	"cclab/orchestrator/fidelity"
	"cclab/orchestrator/flows"
	"cclab/orchestrator/health"
	"cclab/orchestrator/netbuild"
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
		d, err := calibrate.Derive(cal, p.Plan, p.derivedLaws(), p.Exp.LawSet)
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
		vs = append(vs, v.Settings.Strings()...)
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
	d, err := calibrate.Derive(cal, p.Plan, used, p.Exp.LawSet)
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
	o.RTOMin = h.RTOMin.D()
	o.NICQueues = h.NICQueues
	return o
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
		if pd.Switches > lp.Switches || (pd.Switches == lp.Switches && 2*int64(pd.MaxOneWay) > lp.RTTNs) {
			lp = fidelity.Path{Switches: pd.Switches, RTTNs: 2 * int64(pd.MaxOneWay)}
		}
	}
	return lp
}
