package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"cclab/orchestrator/experiment"
	"cclab/tcopt/agent"
	intswitch "cclab/tcopt/switch"
)

// telemetry is the extension an experiment's `switch:` section asks for:
// the software switch on every switch egress port (queue samples into
// queues.csv, INT stamping at dequeue, ECN marking above K) and, with INT
// on, the host agent that reserves and echoes the option. The agent acts on
// the sockets of this process's cgroup: flows run in-process and iperf3
// children inherit the cgroup, so moving this process in covers both.
type telemetry struct {
	cfg experiment.Switch
	// echoPinDir is the laws' pin directory (empty: the real one), where
	// the agent shares the echo map with the INT laws.
	echoPinDir string

	sw     *intswitch.Switch
	smp    *intswitch.Sampler
	queues *os.File
	ag     *agent.Agent
}

// TelemetryJSON is what run.json records under extensions.switch.
type TelemetryJSON struct {
	INT           bool                  `json:"int"`
	ECNThreshold  uint64                `json:"ecn_threshold_bytes"`
	QueueSampleNs int64                 `json:"queue_sample_ns"`
	QueueRows     uint64                `json:"queue_rows"`
	Ports         []intswitch.PortStats `json:"ports"`
	Agent         *agent.Stats          `json:"agent,omitempty"`
}

func (t *telemetry) Name() string { return "switch" }

func (t *telemetry) Start(ctx context.Context, env *Env) (err error) {
	defer func() {
		if err != nil {
			t.close()
		}
	}()
	ports := intswitch.PortsFromPlan(env.Plan, t.cfg.ECNThreshold)
	if t.sw, err = intswitch.Attach(ctx, intswitch.Config{Netns: env.Network.Netns, Ports: ports}); err != nil {
		return fmt.Errorf("attach switch: %w", err)
	}
	if t.queues, err = os.Create(filepath.Join(env.Dir, "queues.csv")); err != nil {
		return fmt.Errorf("queues.csv: %w", err)
	}
	if t.smp, err = t.sw.StartSampling(ctx, t.cfg.QueueSample.D(), t.queues); err != nil {
		return fmt.Errorf("queue sampling: %w", err)
	}
	if !t.cfg.INT {
		return nil
	}
	if t.ag, err = agent.Attach(ctx, env.ID, agent.Options{EchoPinDir: t.echoPinDir}); err != nil {
		return fmt.Errorf("attach INT host agent: %w", err)
	}
	if err = t.ag.AddProcess(os.Getpid()); err != nil {
		return fmt.Errorf("INT host agent: %w", err)
	}
	return nil
}

func (t *telemetry) Stop(context.Context) (any, error) {
	out := TelemetryJSON{INT: t.cfg.INT, ECNThreshold: uint64(t.cfg.ECNThreshold), QueueSampleNs: int64(t.cfg.QueueSample)}
	var errs []error
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

// close releases whatever Start acquired; the agent's Close also moves this
// process back out of the run's cgroup.
func (t *telemetry) close() error {
	var errs []error
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
