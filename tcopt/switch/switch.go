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
// the enqueue counter on the port's egress, the dequeue stamper on its
// peer's ingress, and one qdisc-drop tracepoint. Attach ports while they
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

	tp, err := link.AttachTracing(link.TracingOptions{Program: s.objs.IntSwitchDrop})
	if err != nil {
		return nil, fmt.Errorf("attach qdisc drop tracepoint: %w", err)
	}
	s.links = append(s.links, tp)
	// Dequeue hooks first: a packet counted at enqueue must be seen leaving.
	for _, p := range peers {
		if err := s.attachTCX(p, s.objs.IntSwitchDequeue, ebpf.AttachTCXIngress); err != nil {
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
	Transmitted    uint64 // bytes dequeued and seen at the peer (txBytes)
	TransmittedPkt uint64
	Dropped        uint64 // bytes the qdisc dropped
	DroppedPkts    uint64
	Lost           uint64 // bytes dequeued but dropped before the peer
	LostPkts       uint64
	Stamped        uint64 // INT records written
	Overflowed     uint64 // full INT options flagged
	CEMarked       uint64 // packets CE-marked
	LenMismatch    uint64 // packets whose length disagreed with the kernel's qdisc_pkt_len (should be 0)
}

// QueueBytes is the measured queue: what entered and has not left or been
// dropped.
func (p PortStats) QueueBytes() uint64 {
	out := p.Transmitted + p.Dropped + p.Lost
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
			Dropped: r.DropBytes, DroppedPkts: r.DropPkts,
			Lost: r.LostBytes, LostPkts: r.LostPkts,
			Stamped: r.Stamped, Overflowed: r.Overflowed,
			CEMarked: r.CeMarked, LenMismatch: r.LenMismatch,
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

// TracepointMisses is how many times the kernel skipped the qdisc-drop
// tracepoint program because it was already running on the CPU (BPF
// recursion protection). Each miss is a drop the queue accounting did not
// see, leaving the measured queue too long by that packet for good; a run
// reports it as a health figure (0 in every test so far).
func (s *Switch) TracepointMisses() (uint64, error) {
	st, err := s.objs.IntSwitchDrop.Stats()
	if err != nil {
		return 0, fmt.Errorf("qdisc drop program stats: %w", err)
	}
	return st.RecursionMisses, nil
}
