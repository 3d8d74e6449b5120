// Package netbuild builds a topology.Plan out of network namespaces and
// veth pairs with netlink, and tears it down. One netlink socket per
// namespace, goroutines across namespaces, and no `ip` processes keep a
// k=8 fat-tree (208 namespaces) within seconds on two cores.
package netbuild

import (
	"context"
	"fmt"
	"time"

	"cclab/internal/rcuexpedite"
	"cclab/internal/runid"
	"cclab/internal/units"
	"cclab/orchestrator/cleanup"
	"cclab/orchestrator/delay"
	"cclab/topology"
)

// Options are the per-experiment settings of the hosts. Switches always
// forward (ip_forward=1) and hash ECMP on L4 (fib_multipath_hash_policy=1).
//
// The offload switches apply to every interface of the topology, hosts and
// switches alike: per-packet telemetry needs GSO/TSO off (or a small
// GSOMaxSize), since the INT option is written once per GSO skb.
type Options struct {
	TCPTimestamps bool   // net.ipv4.tcp_timestamps; off when the INT option is used (option space)
	ECN           int    // net.ipv4.tcp_ecn: 0 off, 1 request and accept, 2 accept only
	DefaultCC     string // net.ipv4.tcp_congestion_control on hosts; "" means cubic
	GSO, TSO, GRO bool   // ethtool features generic-segmentation/tcp-segmentation/generic-receive-offload
	TxChecksum    bool   // ethtool tx-checksumming; off makes the stack compute checksums (TSO needs it on)
	GSOMaxSize    int    // gso_max_size of every interface in bytes; 0 keeps the kernel's 65536
	// NICQueues is how many queues each host's NIC port serves round
	// robin (NICClass gives a flow's); 0 or 1 is one FIFO.
	NICQueues int `json:"nic_queues,omitempty"`
	// InitRwnd, when not 0, is the receive window in bytes a host offers
	// from a connection's first segment (its route's initrwnd, in
	// segments, and a receive buffer twice that), instead of the
	// kernel's 64 KB, opened as data arrives: a sender that is to start
	// at line rate, as an Ethernet reaction point does, needs its
	// receiver's window from the start.
	InitRwnd int `json:"init_rwnd,omitempty"`
	// RTOMin, when not 0, is every host's minimum retransmission timeout
	// (its default route's rto_min metric), in place of the kernel's
	// 200 ms: lossless fabrics raise it (experiment.DefaultLosslessRTOMin).
	RTOMin time.Duration `json:"rto_min_ns,omitempty"`
	// Sysctls are extra host sysctls, e.g. {"net.ipv4.tcp_min_rtt_wlen": "1"}.
	Sysctls map[string]string
	// Workers is how many namespaces are configured at once; 0 picks a
	// default for the machine.
	Workers int
	// DelayEngine holds packets for the links' propagation delay
	// (orchestrator/delay): netem or cclab's line; "" picks netem where
	// the kernel has it.
	DelayEngine delay.Engine `json:"delay_engine,omitempty"`
	// Lossless gives every port a pausable TBF root instead of HTB
	// (tbf.go) and turns segmentation and receive offloads off (MTU
	// frames); SharedBuffer, when set, is then every switch port's FIFO
	// limit (a lossless switch's buffer B, bounded by PFC alone).
	Lossless     bool       `json:"lossless,omitempty"`
	SharedBuffer units.Size `json:"shared_buffer_bytes,omitempty"`
}

// DefaultOptions is the kernel's own behaviour with the CC pinned: TCP
// timestamps on, ECN accept-only (2), cubic, a veth's default offloads
// (checksum, TSO, GSO on; GRO off), the kernel's gso_max_size. Experiments with per-packet INT turn timestamps and
// GSO/TSO off. The zero Options differs: everything off, ECN 0, cubic.
func DefaultOptions() Options {
	return Options{
		TCPTimestamps: true, ECN: 2, DefaultCC: "cubic",
		GSO: true, TSO: true, GRO: false, TxChecksum: true,
	}
}

// HTBBurst is the burst of every HTB class. tc's default burst (rate/HZ +
// MTU) under-shoots the configured rate on veths (DESIGN.md); 64 KB holds it.
const HTBBurst = 64 << 10

// NetworkFile, in the run's state directory next to plan.json, records the
// options and timing of the build.
const NetworkFile = "network.json"

// A Network is a built topology.
type Network struct {
	ID      runid.ID
	Plan    *topology.Plan
	Options Options
	Timing  Timing
	// Delay is where the links' propagation delay sits, and Engine what
	// holds it (netem or line; "" when nothing is delayed). With the
	// line, packets wait in their sinks until a line serves them
	// (ServeDelay).
	Delay       *delay.Placement
	DelayEngine delay.Engine
}

// Timing says how long each phase of Up took.
type Timing struct {
	Clean      time.Duration `json:"clean_ns"` // stale leftovers of the same id
	Namespaces time.Duration `json:"namespaces_ns"`
	Links      time.Duration `json:"links_ns"`
	Configure  time.Duration `json:"configure_ns"` // addresses, qdiscs, offloads, routes
	Delay      time.Duration `json:"delay_ns"`     // sinks and programs of the propagation delay
	Total      time.Duration `json:"total_ns"`
}

// Up builds plan p as run id: it first removes leftovers of the same id,
// checks everything it can before touching the kernel (options, congestion
// control, sch_netem for delays, names), records the plan in the run's
// state directory, then creates namespaces, links, addresses, qdiscs and
// routes. On error nothing of the run is left behind.
func Up(ctx context.Context, id runid.ID, p *topology.Plan, opt Options) (*Network, error) {
	start := time.Now()
	if opt.DefaultCC == "" {
		opt.DefaultCC = "cubic"
	}
	if err := check(id, p, opt); err != nil {
		return nil, err
	}
	// Namespaces, veths and qdiscs wait for RCU grace periods hundreds of
	// times (internal/rcuexpedite). The knob only makes this faster: a
	// hold that fails builds at the normal speed, and a restore that
	// fails is retried by the next holder and by `cclab clean`.
	if h, err := rcuexpedite.System.Hold(id); err == nil {
		defer h.Release()
	}
	n := &Network{ID: id, Plan: p, Options: opt}
	pl, err := delay.Place(p)
	if err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	if !pl.Empty() {
		if n.DelayEngine, err = opt.DelayEngine.Resolve(); err != nil {
			return nil, fmt.Errorf("build: %w", err)
		}
		if err := delay.CheckEngine(pl, n.DelayEngine); err != nil {
			return nil, fmt.Errorf("build: %w", err)
		}
		n.Delay = pl
	}
	if _, err := cleanup.Clean(ctx, id); err != nil {
		return nil, fmt.Errorf("clean leftovers of run %s: %w", id, err)
	}
	n.Timing.Clean = time.Since(start)
	if err := cleanup.WriteJSON(id, cleanup.PlanFile, p); err != nil {
		cleanup.Clean(context.WithoutCancel(ctx), id)
		return nil, err
	}
	if err := build(ctx, n); err != nil {
		if _, cerr := cleanup.Clean(context.WithoutCancel(ctx), id); cerr != nil {
			return nil, fmt.Errorf("%w (and cleaning up: %v)", err, cerr)
		}
		return nil, err
	}
	n.Timing.Total = time.Since(start)
	if err := cleanup.WriteJSON(id, NetworkFile, struct {
		Options Options `json:"options"`
		Timing  Timing  `json:"timing"`
	}{opt, n.Timing}); err != nil {
		cleanup.Clean(context.WithoutCancel(ctx), id)
		return nil, err
	}
	return n, nil
}

// ServeDelay starts the delay line of a network built with the line
// engine; nil when it needs none (no delay, or netem holds it).
func (n *Network) ServeDelay(ctx context.Context, opt delay.ServeOptions) (*delay.Server, error) {
	if n.DelayEngine != delay.EngineLine {
		return nil, nil
	}
	opt.Netns = n.Netns
	return delay.Serve(ctx, n.Delay, opt)
}

// Namespaces lists the run's namespaces, in plan order.
func (n *Network) Namespaces() []string {
	out := make([]string, len(n.Plan.Nodes))
	for i, nd := range n.Plan.Nodes {
		out[i] = n.Netns(nd.Name)
	}
	return out
}

// Netns returns the namespace name of a node.
func (n *Network) Netns(node string) string { return n.ID.Netns(node) }

// Down removes the run: namespaces (with their veths), processes in them or
// recorded for the run, BPF pins and the state directory.
func (n *Network) Down(ctx context.Context) error {
	if h, err := rcuexpedite.System.Hold(n.ID); err == nil {
		defer h.Release()
	}
	_, err := cleanup.Clean(ctx, n.ID)
	return err
}

// RecordPID notes a process the run started, so that Down and `cclab
// clean` kill it.
func RecordPID(id runid.ID, pid int) error { return cleanup.RecordPID(id, pid) }
