package runner

import (
	"context"

	"cclab/internal/runid"
	"cclab/orchestrator/flows"
	"cclab/orchestrator/netbuild"
	"cclab/orchestrator/workload"
	"cclab/topology"
)

// An Extension is started after the network is up and captures run, just
// before the workload, and stopped right after it: the hook for queue
// sampling from the switch maps (queues.csv), per-ACK law traces
// (cc_trace.csv) and anything else that watches a run. What Stop returns is
// recorded in run.json under "extensions"/Name().
type Extension interface {
	Name() string
	Start(ctx context.Context, env *Env) error
	Stop(ctx context.Context) (any, error)
}

// Env is what an extension may use: the run's id and directory (write your
// files there), the network, the flows and the hosts' namespaces.
type Env struct {
	ID      runid.ID
	Dir     string
	CC      string // the congestion control of this variant
	Network *netbuild.Network
	Plan    *topology.Plan
	Flows   []workload.Flow
	Hosts   map[string]flows.Host
	// ZeroNs is the CLOCK_MONOTONIC time zero of the workload.
	ZeroNs int64
}

// A beginner is an extension that acts at times of the workload: Begin
// gives it the final time zero (CLOCK_MONOTONIC ns), which may move after
// the extensions started.
type beginner interface {
	Begin(zero int64)
}
