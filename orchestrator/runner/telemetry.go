package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"cclab/orchestrator/experiment"
	"cclab/orchestrator/live"
	"cclab/orchestrator/watch"
	"cclab/rundir"
	"cclab/tcopt/agent"
	"cclab/tcopt/intswitch"
	"cclab/topology"
)

// telemetry is the extension an experiment's `switch:` section asks for:
// the software switch on every switch egress port (queue samples into
// queues.csv, INT stamping at dequeue, ECN marking as the variant's profile
// says) and, with INT on, the host agent that reserves and echoes the
// option. The agent acts on the sockets of this process's cgroup: flows
// run in-process and iperf3 children inherit the cgroup, so moving this
// process in covers both.
type telemetry struct {
	cfg experiment.Switch
	// profile is the ECN marking of this variant's run, from says where
	// it comes from (experiment.Switch.Profile).
	profile experiment.ECNProfile
	from    string
	ports   []intswitch.PortConfig
	// stampINT: this run stamps INT (stampsINT): the host agent reserves and
	// echoes the option.
	stampINT bool
	// echoPinDir is the laws' pin directory (empty: the real one), where
	// the agent shares the echo map with the INT laws.
	echoPinDir string
	// switches lends the switch's verified programs from the run's
	// earlier variants (intswitch.Cache).
	switches *intswitch.Cache

	sw      *intswitch.Switch
	portSmp *watch.PortSampler
	// stopPorts ends the control socket that answers `cclab watch`.
	stopPorts func()
	smp       *intswitch.Sampler
	queues    *os.File
	ag        *agent.Agent
}

// TelemetryJSON is what run.json records under extensions.switch.
type TelemetryJSON struct {
	INT bool `json:"int"`
	// The variant's ECN marking: ECNProfile says where it comes from
	// ("switch", or "ecn_profiles.NAME"); a step above ECNThreshold bytes
	// (0: none), or ECNRed as the file gives it. ECNPorts is what the
	// switch ports hold, read back from the kernel, one entry per port
	// rate (RED's thresholds scaled to it).
	ECNProfile    string                `json:"ecn_profile"`
	ECNThreshold  uint64                `json:"ecn_threshold_bytes"`
	ECNRed        *experiment.RED       `json:"ecn_red,omitempty"`
	QCN           *experiment.QCN       `json:"qcn,omitempty"` // the congestion points' profile
	ECNPorts      []PortMarkingJSON     `json:"ecn_ports,omitempty"`
	QueueSampleNs int64                 `json:"queue_sample_ns"`
	QueueRows     uint64                `json:"queue_rows"`
	Ports         []intswitch.PortStats `json:"ports"`
	Agent         *agent.Stats          `json:"agent,omitempty"`
}

// PortMarkingJSON is the ECN marking the switch ports of one rate hold:
// a step above ThresholdBytes, RED from KminBytes to KmaxBytes, or none
// (all zero).
type PortMarkingJSON struct {
	RateBps        uint64  `json:"rate_bps"`
	ThresholdBytes uint64  `json:"threshold_bytes,omitempty"`
	KminBytes      uint64  `json:"kmin_bytes,omitempty"`
	KmaxBytes      uint64  `json:"kmax_bytes,omitempty"`
	Pmax           float64 `json:"pmax,omitempty"`
	QCNQeqBytes    uint64  `json:"qcn_qeq_bytes,omitempty"`
	QCNSampleBytes uint64  `json:"qcn_sample_bytes,omitempty"`
	TCDMaxTonNs    uint64  `json:"tcd_max_ton_ns,omitempty"`
	TCDThreshold   uint64  `json:"tcd_threshold_bytes,omitempty"`
}

// switchMarking is an experiment's ECN profile as the switch takes it.
func switchMarking(p experiment.ECNProfile) intswitch.Marking {
	m := intswitch.Marking{Threshold: p.ECNThreshold}
	if r := p.ECNRed; r != nil {
		m.RED = intswitch.RED{Kmin: r.Kmin, Kmax: r.Kmax, Pmax: float64(r.Pmax), Rate: r.Rate}
	}
	if q := p.QCN; q != nil {
		m.QCN = intswitch.QCN{Qeq: q.Qeq, Sample: q.Sample, Rate: q.Rate}
	}
	if c := p.TCD; c != nil {
		m.TCD = intswitch.TCD{MaxTon: c.MaxTon.D(), Threshold: c.Threshold}
	}
	return m
}

// checkMarkings checks, before anything is built, that every switch port
// of the plan can mark as each compared name's profile says: RED's
// thresholds scaled to a port's rate must stay apart.
func checkMarkings(exp *experiment.Experiment, plan *topology.Plan, ccs []string) error {
	for _, cc := range ccs {
		p, from := exp.Switch.Profile(cc)
		m := switchMarking(p)
		for _, port := range intswitch.PortsFromPlan(plan, m) {
			if err := m.Check(port.Rate); err != nil {
				return fmt.Errorf("%s:%d: %s (for %s): switch port %s/%s: %w", exp.File, p.Line, from, cc, port.Node, port.Iface, err)
			}
		}
	}
	return nil
}

func (t *telemetry) Name() string { return "switch" }

func (t *telemetry) Start(ctx context.Context, env *Env) (err error) {
	defer func() {
		if err != nil {
			t.close()
		}
	}()
	// This variant's marking, on a switch attached for its run alone (each
	// variant builds its own network).
	t.profile, t.from = t.cfg.Profile(env.CC)
	t.ports = intswitch.PortsFromPlan(env.Plan, switchMarking(t.profile))
	cfg := intswitch.Config{Netns: env.Network.Netns, Ports: t.ports, Cache: t.switches, PFC: pfcSettings(t.cfg.PFC, env.Plan)}
	if t.sw, err = intswitch.Attach(ctx, cfg); err != nil {
		return fmt.Errorf("attach switch: %w", err)
	}
	t.portSmp = watch.NewPortSampler(t.sw)
	if t.stopPorts, err = live.ServePorts(env.ID, t.sw); err != nil {
		return err
	}
	if t.queues, err = os.Create(filepath.Join(env.Dir, rundir.QueuesCSV)); err != nil {
		return fmt.Errorf("queues.csv: %w", err)
	}
	if t.smp, err = t.sw.StartSampling(ctx, t.cfg.QueueSample.D(), t.queues); err != nil {
		return fmt.Errorf("queue sampling: %w", err)
	}
	if !t.stampINT {
		return nil
	}
	if t.ag, err = agent.Attach(ctx, env.ID, agent.Options{EchoPinDir: t.echoPinDir, QCNSlot: t.profile.QCN != nil}); err != nil {
		return fmt.Errorf("attach INT host agent: %w", err)
	}
	if err = t.ag.AddProcess(os.Getpid()); err != nil {
		return fmt.Errorf("INT host agent: %w", err)
	}
	return nil
}

func (t *telemetry) Stop(context.Context) (any, error) {
	out := TelemetryJSON{INT: t.stampINT, ECNProfile: t.from, ECNThreshold: uint64(t.profile.ECNThreshold),
		ECNRed: t.profile.ECNRed, QCN: t.profile.QCN, QueueSampleNs: int64(t.cfg.QueueSample)}
	var errs []error
	if t.sw != nil {
		var err error
		out.ECNPorts, err = t.portMarkings()
		errs = append(errs, err)
	}
	if t.smp != nil {
		errs = append(errs, t.smp.Stop())
		out.QueueRows = t.smp.Rows()
		t.smp = nil
	}
	if t.sw != nil {
		ps, err := t.sw.Stats()
		errs = append(errs, err)
		out.Ports = ps
	}
	if t.ag != nil {
		st, err := t.ag.Stats()
		errs = append(errs, err)
		out.Agent = &st
	}
	errs = append(errs, t.close())
	return out, errors.Join(errs...)
}

// portMarkings reads the marking every switch port holds, one entry per
// port rate (ports of one rate hold the same).
func (t *telemetry) portMarkings() ([]PortMarkingJSON, error) {
	ms, err := t.sw.Markings()
	if err != nil {
		return nil, err
	}
	var out []PortMarkingJSON
	for i, port := range t.ports {
		m := PortMarkingJSON{RateBps: port.Rate.BitsPerSecond(), ThresholdBytes: uint64(ms[i].Threshold),
			KminBytes: uint64(ms[i].RED.Kmin), KmaxBytes: uint64(ms[i].RED.Kmax), Pmax: ms[i].RED.Pmax,
			QCNQeqBytes: uint64(ms[i].QCN.Qeq), QCNSampleBytes: uint64(ms[i].QCN.Sample),
			TCDMaxTonNs: uint64(ms[i].TCD.MaxTon.Nanoseconds()), TCDThreshold: uint64(ms[i].TCD.Threshold)}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b PortMarkingJSON) int { return cmp.Compare(a.RateBps, b.RateBps) })
	return out, nil
}

// close releases whatever Start acquired; the agent's Close also moves this
// process back out of the run's cgroup.
func (t *telemetry) close() error {
	var errs []error
	if t.stopPorts != nil {
		t.stopPorts()
		t.stopPorts = nil
	}
	if t.smp != nil {
		errs = append(errs, t.smp.Stop())
		t.smp = nil
	}
	if t.ag != nil {
		errs = append(errs, t.ag.Close())
		t.ag = nil
	}
	if t.sw != nil {
		errs = append(errs, t.sw.Close())
		t.sw = nil
	}
	if t.queues != nil {
		errs = append(errs, t.queues.Close())
		t.queues = nil
	}
	return errors.Join(errs...)
}
