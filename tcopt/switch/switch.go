package intswitch

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"cclab/internal/nsexec"
)

// A Switch is the INT switch attached to a set of ports. Its tc programs
// are tcx links inside the run's namespaces and its maps live in this
// process: nothing is pinned, and everything goes with Close (or with the
// namespaces and the process).
type Switch struct {
	ports []PortConfig
	objs  switchbpfObjects
	links []link.Link

	mu      sync.Mutex
	sampler *Sampler
}

// Attach loads the switch programs and attaches them to every port of cfg:
// the enqueue counter on the port's tc egress, the stamper on its peer's
// tc ingress, and (once for all ports) the qdisc-drop tracepoint and the
// transmit counter on the net_dev_start_xmit tracepoint. Attach ports while they
// are idle: a packet already queued when the hooks arrive would be counted
// at dequeue only. On error nothing stays attached.
func Attach(ctx context.Context, cfg Config) (_ *Switch, err error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	spec, err := loadSwitchbpf()
	if err != nil {
		return nil, fmt.Errorf("load switch BPF spec: %w", err)
	}
	// The arrays hold exactly our ports, so telemetry reads them in one go.
	for _, name := range []string{"port_cfgs", "port_states"} {
		spec.Maps[name].MaxEntries = uint32(len(cfg.Ports))
	}
	s := &Switch{ports: append([]PortConfig(nil), cfg.Ports...)}
	if err := spec.LoadAndAssign(&s.objs, nil); err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			return nil, fmt.Errorf("load switch BPF: %+v", ve)
		}
		return nil, fmt.Errorf("load switch BPF: %w", err)
	}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()

	egress := make([]iface, len(cfg.Ports))
	peers := make([]iface, len(cfg.Ports))
	for i, p := range cfg.Ports {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if egress[i], err = resolve(cfg.Netns(p.Node), p.Iface); err != nil {
			return nil, fmt.Errorf("switch port %s/%s: %w", p.Node, p.Iface, err)
		}
		if peers[i], err = resolve(cfg.Netns(p.PeerNode), p.PeerIface); err != nil {
			return nil, fmt.Errorf("switch port %s/%s peer: %w", p.Node, p.Iface, err)
		}
		idx := uint32(i)
		pc := switchbpfPortCfg{EcnK: uint64(p.ECNThreshold), RateMbps: rateMbps(p.Rate)}
		if err := s.objs.PortCfgs.Put(idx, &pc); err != nil {
			return nil, fmt.Errorf("switch port %s/%s config: %w", p.Node, p.Iface, err)
		}
		if err := s.objs.EgressPorts.Put(keyOf(egress[i]), idx); err != nil {
			return nil, fmt.Errorf("switch port %s/%s: %w", p.Node, p.Iface, err)
		}
		if err := s.objs.DequeuePorts.Put(keyOf(peers[i]), idx); err != nil {
			return nil, fmt.Errorf("switch port %s/%s peer: %w", p.Node, p.Iface, err)
		}
	}

	for _, tp := range []struct {
		what string
		prog *ebpf.Program
	}{{"qdisc drop tracepoint", s.objs.IntSwitchDrop}, {"transmit tracepoint", s.objs.IntSwitchXmit}} {
		l, err := link.AttachTracing(link.TracingOptions{Program: tp.prog})
		if err != nil {
			return nil, fmt.Errorf("attach %s: %w", tp.what, err)
		}
		s.links = append(s.links, l)
	}
	// The stampers, then the enqueue counters: a packet counted entering
	// must be seen leaving.
	for _, p := range peers {
		if err := s.attachTCX(p, s.objs.IntSwitchStamp, ebpf.AttachTCXIngress); err != nil {
			return nil, err
		}
	}
	for _, e := range egress {
		if err := s.attachTCX(e, s.objs.IntSwitchEnqueue, ebpf.AttachTCXEgress); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func keyOf(i iface) switchbpfPortKey {
	return switchbpfPortKey{NetnsCookie: i.cookie, Ifindex: uint32(i.ifindex)}
}

// attachTCX attaches prog to an interface; the ifindex means something only
// inside the interface's namespace, so the link is made from there.
func (s *Switch) attachTCX(i iface, prog *ebpf.Program, at ebpf.AttachType) error {
	return nsexec.Do(i.netns, func() error {
		l, err := link.AttachTCX(link.TCXOptions{
			Interface: i.ifindex, Program: prog, Attach: at, Anchor: link.Tail(),
		})
		if err != nil {
			return fmt.Errorf("attach %s to %s in %s: %w", prog, i.name, i.netns, err)
		}
		s.links = append(s.links, l)
		return nil
	})
}

// Close stops sampling, detaches every program and frees the maps.
func (s *Switch) Close() error {
	var errs []error
	s.mu.Lock()
	smp := s.sampler
	s.sampler = nil
	s.mu.Unlock()
	if smp != nil {
		errs = append(errs, smp.Stop())
	}
	for i := len(s.links) - 1; i >= 0; i-- {
		if err := s.links[i].Close(); err != nil {
			errs = append(errs, fmt.Errorf("detach: %w", err))
		}
	}
	s.links = nil
	if err := s.objs.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close switch BPF objects: %w", err))
	}
	return errors.Join(errs...)
}

// PortStats are one port's cumulative counters, in the qdisc's byte units.
type PortStats struct {
	Node, Iface    string
	Enqueued       uint64 // bytes entering the qdisc
	EnqueuedPkts   uint64
	Transmitted    uint64 // bytes the qdisc handed to the driver (txBytes)
	TransmittedPkt uint64
	Dropped        uint64 // bytes the qdisc dropped
	DroppedPkts    uint64
	Backlog        uint64 // the root qdisc's backlog at the port's last event
	Stamped        uint64 // INT records written
	Overflowed     uint64 // full INT options flagged
	CEMarked       uint64 // packets CE-marked
	// Late counts packets that reached the peer without a snapshot from
	// the transmit tracepoint (a few in a thousand under load, cause
	// unknown; or one evicted from the in-flight map): counted as
	// transmitted there, and stamped with the port's state on arrival.
	Late uint64
}

// QueueBytes is the port's queue: the root qdisc's backlog as of the last
// packet that entered, left or was dropped.
func (p PortStats) QueueBytes() uint64 { return p.Backlog }

// CountedQueue is the queue by the counters: what entered and has neither
// left nor been dropped. It equals QueueBytes once the port drains, unless
// a drop or transmission event was lost.
func (p PortStats) CountedQueue() uint64 {
	out := p.Transmitted + p.Dropped
	if p.Enqueued <= out {
		return 0
	}
	return p.Enqueued - out
}

// Stats reads every port's counters, in the order of the config's ports.
func (s *Switch) Stats() ([]PortStats, error) {
	raw, err := s.readStates()
	if err != nil {
		return nil, err
	}
	out := make([]PortStats, len(raw))
	for i, r := range raw {
		out[i] = PortStats{
			Node: s.ports[i].Node, Iface: s.ports[i].Iface,
			Enqueued: r.EnqBytes, EnqueuedPkts: r.EnqPkts,
			Transmitted: r.DeqBytes, TransmittedPkt: r.DeqPkts,
			Dropped: r.DropBytes, DroppedPkts: r.DropPkts, Backlog: r.Backlog,
			Stamped: r.Stamped, Overflowed: r.Overflowed,
			CEMarked: r.CeMarked, Late: r.Late,
		}
	}
	return out, nil
}

// readStates reads the whole state array in one system call.
func (s *Switch) readStates() ([]switchbpfPortState, error) {
	n := len(s.ports)
	keys := make([]uint32, n)
	vals := make([]switchbpfPortState, n)
	var cursor ebpf.MapBatchCursor
	got, err := s.objs.PortStates.BatchLookup(&cursor, keys, vals, nil)
	if err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		return nil, fmt.Errorf("read switch port states: %w", err)
	}
	if got != n {
		return nil, fmt.Errorf("read switch port states: got %d of %d", got, n)
	}
	return vals, nil
}

// TracepointMisses is how many times the kernel skipped the tracing
// programs (qdisc drops, transmissions) because one was already running on the
// CPU (BPF recursion protection). Each miss is a drop or a transmission
// the queue accounting did not see, which leaves the measured queue off by
// that packet for good; a run reports it as a health figure (0 in every
// test so far).
func (s *Switch) TracepointMisses() (uint64, error) {
	var n uint64
	for _, p := range []*ebpf.Program{s.objs.IntSwitchDrop, s.objs.IntSwitchXmit} {
		st, err := p.Stats()
		if err != nil {
			return 0, fmt.Errorf("switch program stats: %w", err)
		}
		n += st.RecursionMisses
	}
	return n, nil
}
