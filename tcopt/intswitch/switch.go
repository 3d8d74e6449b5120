package intswitch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"cclab/internal/nsexec"
	"cclab/internal/units"
)

// A Switch is the INT switch attached to a set of ports. Its tc programs
// are tcx links inside the run's namespaces (or, on kernels without tcx,
// cls_bpf filters there) and its maps live in this process: nothing is
// pinned, and everything goes with Close (or with the namespaces; tcx
// links also with the process).
type Switch struct {
	ports   []PortConfig
	mode    AttachMode
	objs    objects
	tcProgs []tcPrograms  // one pair, or one per port (classic)
	stamper *ebpf.Program // classic: the stamper the ports tail-call
	links   []link.Link
	filters []*classicFilter
	cache   *Cache // tcx: where the programs and maps go at Close

	pfc pfcLayout // the lossless fabric's numbering (empty: lossy)

	mu      sync.Mutex
	sampler *Sampler
}

// objects are what both builds of the switch share: the tracing programs
// and the maps. The tc programs are loaded apart.
type objects struct {
	IntSwitchXmit *ebpf.Program `ebpf:"int_switch_xmit"`
	IntSwitchDrop *ebpf.Program `ebpf:"int_switch_drop"`
	switchbpfMaps
}

func (o *objects) Close() error {
	var errs []error
	for _, p := range []*ebpf.Program{o.IntSwitchXmit, o.IntSwitchDrop} {
		errs = append(errs, p.Close()) // nil-safe
	}
	for _, m := range []*ebpf.Map{o.DequeuePorts, o.Dequeued, o.EgressPorts, o.PortCfgs, o.PortStates, o.PortDevs, o.Stamper, o.QcnPending, o.SwitchGlobals,
		o.PfcCfgs, o.PfcStates, o.IngressBytes, o.PfcMembers, o.PfcIfaces, o.SwUsed, o.PfcEvents} {
		errs = append(errs, m.Close())
	}
	return errors.Join(errs...)
}

// tcPrograms are the enqueue counter and the stamper: one pair for all
// ports (tcx), or one per port (classic, where Stamp is the port's
// int_switch_stamp_port, which tail-calls the stamper).
type tcPrograms struct {
	Enqueue *ebpf.Program
	Stamp   *ebpf.Program
}

// Attach loads the switch programs and attaches them to every port of cfg:
// the enqueue counter on the port's tc egress, the stamper on its peer's
// tc ingress, and (once for all ports) the qdisc-drop tracepoint and the
// transmit counter on the net_dev_start_xmit tracepoint. cfg.Attach
// chooses tcx links or classic cls_bpf filters (default: tcx where the
// kernel has it). Attach ports while they are
// idle: a packet already queued when the hooks arrive would be counted at
// dequeue only. On error nothing stays attached.
func Attach(ctx context.Context, cfg Config) (_ *Switch, err error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	mode, err := resolveMode(cfg.Attach)
	if err != nil {
		return nil, err
	}
	if err := classicRefuses(mode, cfg); err != nil {
		return nil, err
	}
	s := &Switch{ports: append([]PortConfig(nil), cfg.Ports...), mode: mode}
	if mode != AttachClassic {
		s.cache = cfg.Cache
	}
	if err := s.load(); err != nil {
		return nil, err
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
		var pc switchbpfPortCfg
		if pc, err = p.Marking().portCfg(p.Rate); err != nil { // checked by validate
			return nil, fmt.Errorf("switch port %s/%s: %w", p.Node, p.Iface, err)
		}
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

	if err := s.setGlobals(); err != nil {
		return nil, err
	}
	if err := s.configurePFC(cfg.PFC, egress, peers); err != nil {
		return nil, err
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
	for i, p := range peers {
		if err := s.attachTC(p, s.progsOf(i).Stamp, true); err != nil {
			return nil, err
		}
	}
	for i, e := range egress {
		if err := s.attachTC(e, s.progsOf(i).Enqueue, false); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// load takes the switch's programs and maps from its cache, emptied, or
// loads and verifies them.
func (s *Switch) load() error {
	if s.cache != nil {
		if l := s.cache.take(len(s.ports)); l != nil {
			s.objs, s.tcProgs = l.objs, l.tcProgs
			return s.objs.reset()
		}
	}
	load := loadSwitchbpf
	if s.mode == AttachClassic {
		load = loadSwitchclassicbpf
	}
	spec, err := load()
	if err != nil {
		return fmt.Errorf("load switch BPF spec (%s): %w", s.mode, err)
	}
	// The arrays hold exactly our ports, so telemetry reads them in one go.
	for _, name := range []string{"port_cfgs", "port_states", "pfc_cfgs", "pfc_states", "sw_used"} {
		spec.Maps[name].MaxEntries = uint32(len(s.ports))
	}
	for _, name := range []string{"ingress_bytes", "pfc_members"} {
		spec.Maps[name].MaxEntries = uint32(len(s.ports) * MaxPFCPorts)
	}
	if err := spec.LoadAndAssign(&s.objs, nil); err != nil {
		return loadErr(s.mode, err)
	}
	return s.loadTCPrograms(spec)
}

// progsOf returns the tc programs of port i.
func (s *Switch) progsOf(i int) tcPrograms {
	if s.mode == AttachClassic {
		return s.tcProgs[i]
	}
	return s.tcProgs[0]
}

// attachTC attaches a tc program to an interface's ingress or egress, as a
// tcx link or a classic filter.
func (s *Switch) attachTC(i iface, prog *ebpf.Program, ingress bool) error {
	if s.mode == AttachClassic {
		f, err := attachClassic(i, prog, ingress)
		if err != nil {
			return err
		}
		s.filters = append(s.filters, f)
		return nil
	}
	at := ebpf.AttachTCXEgress
	if ingress {
		at = ebpf.AttachTCXIngress
	}
	return s.attachTCX(i, prog, at)
}

// ErrNeedsTCX: PFC and TCD are not in the classic build (kernels without
// tcx): Debian 6.1's verifier refused its programs with them in.
var ErrNeedsTCX = errors.New("PFC and TCD need the tcx build of the switch (Linux 6.6 or newer)")

// classicRefuses refuses, in the classic build, a config with PFC or TCD.
func classicRefuses(mode AttachMode, cfg Config) error {
	if mode != AttachClassic {
		return nil
	}
	if cfg.PFC.On() {
		return fmt.Errorf("switch config: PFC: %w", ErrNeedsTCX)
	}
	for _, p := range cfg.Ports {
		if p.TCD.On() {
			return fmt.Errorf("switch port %s/%s: TCD: %w", p.Node, p.Iface, ErrNeedsTCX)
		}
	}
	return nil
}

func loadErr(mode AttachMode, err error) error {
	var ve *ebpf.VerifierError
	if errors.As(err, &ve) {
		return fmt.Errorf("load switch BPF (%s): %+v", mode, ve)
	}
	return fmt.Errorf("load switch BPF (%s): %w", mode, err)
}

// loadTCPrograms loads the tc programs. tcx: one pair, which finds its
// port by the device. Classic: the stamper once, into the prog array
// stamper, then per port the enqueue counter and int_switch_stamp_port
// with the port's slot as the constant port_slot. All share the maps
// already loaded.
func (s *Switch) loadTCPrograms(spec *ebpf.CollectionSpec) error {
	opts := &ebpf.CollectionOptions{MapReplacements: map[string]*ebpf.Map{
		"dequeue_ports": s.objs.DequeuePorts, "dequeued": s.objs.Dequeued,
		"egress_ports": s.objs.EgressPorts, "port_cfgs": s.objs.PortCfgs,
		"port_states": s.objs.PortStates, "port_devs": s.objs.PortDevs,
		"stamper": s.objs.Stamper, "qcn_pending": s.objs.QcnPending,
		"switch_globals": s.objs.SwitchGlobals,
		"pfc_cfgs":       s.objs.PfcCfgs, "pfc_states": s.objs.PfcStates,
		"ingress_bytes": s.objs.IngressBytes, "pfc_members": s.objs.PfcMembers,
		"pfc_ifaces": s.objs.PfcIfaces, "sw_used": s.objs.SwUsed,
		"pfc_events": s.objs.PfcEvents,
	}}
	if s.mode != AttachClassic {
		var p struct {
			Enqueue *ebpf.Program `ebpf:"int_switch_enqueue"`
			Stamp   *ebpf.Program `ebpf:"int_switch_stamp"`
		}
		if err := spec.Copy().LoadAndAssign(&p, opts); err != nil {
			return loadErr(s.mode, err)
		}
		s.tcProgs = append(s.tcProgs, tcPrograms{Enqueue: p.Enqueue, Stamp: p.Stamp})
		return nil
	}
	var m struct {
		Stamp *ebpf.Program `ebpf:"int_switch_stamp"`
	}
	if err := spec.Copy().LoadAndAssign(&m, opts); err != nil {
		return loadErr(s.mode, err)
	}
	s.stamper = m.Stamp
	if err := s.objs.Stamper.Put(uint32(0), m.Stamp); err != nil {
		return fmt.Errorf("install the stamper: %w", err)
	}
	for i := range s.ports {
		cs := spec.Copy()
		if err := cs.Variables["port_slot"].Set(uint32(i)); err != nil {
			return fmt.Errorf("tc programs of port %d: %w", i, err)
		}
		var p struct {
			Enqueue   *ebpf.Program `ebpf:"int_switch_enqueue"`
			StampPort *ebpf.Program `ebpf:"int_switch_stamp_port"`
		}
		if err := cs.LoadAndAssign(&p, opts); err != nil {
			return loadErr(s.mode, err)
		}
		s.tcProgs = append(s.tcProgs, tcPrograms{Enqueue: p.Enqueue, Stamp: p.StampPort})
	}
	return nil
}

// SetMarking changes the ECN marking of every port of the running switch
// to m (RED's thresholds scaled to each port's rate when m.RED.Rate is
// set), e.g. between the variants of a run, without reloading anything.
// Each port's entry is rewritten whole; a packet judged while its entry
// changes may see a mix of the two profiles. m is checked against every
// port first: on a bad profile nothing changes.
func (s *Switch) SetMarking(m Marking) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mode == AttachClassic && m.TCD.On() {
		return fmt.Errorf("set marking: TCD: %w", ErrNeedsTCX)
	}
	cfgs := make([]switchbpfPortCfg, len(s.ports))
	for i, p := range s.ports {
		var err error
		if cfgs[i], err = m.portCfg(p.Rate); err != nil {
			return fmt.Errorf("set ECN marking of switch port %s/%s: %w", p.Node, p.Iface, err)
		}
	}
	for i, p := range s.ports {
		if err := s.objs.PortCfgs.Put(uint32(i), &cfgs[i]); err != nil {
			return fmt.Errorf("set ECN marking of switch port %s/%s: %w", p.Node, p.Iface, err)
		}
		s.ports[i].ECNThreshold, s.ports[i].ECNRed, s.ports[i].QCN, s.ports[i].TCD = m.Threshold, m.RED, m.QCN, m.TCD
	}
	return s.setGlobals()
}

// setGlobals tells the programs whether some port is a QCN congestion
// point (only then do they look for ACKs to carry feedback).
func (s *Switch) setGlobals() error {
	var g switchbpfSwitchGlobal
	for _, p := range s.ports {
		if p.QCN.On() {
			g.QcnOn = 1
		}
	}
	if err := s.objs.SwitchGlobals.Put(uint32(0), &g); err != nil {
		return fmt.Errorf("switch globals: %w", err)
	}
	return nil
}

// Markings returns every port's ECN marking, in the order of the config's
// ports, as the kernel holds it: RED's thresholds scaled to the port.
func (s *Switch) Markings() ([]Marking, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Marking, len(s.ports))
	for i, p := range s.ports {
		var pc switchbpfPortCfg
		if err := s.objs.PortCfgs.Lookup(uint32(i), &pc); err != nil {
			return nil, fmt.Errorf("read ECN marking of switch port %s/%s: %w", p.Node, p.Iface, err)
		}
		out[i] = markingOf(pc)
	}
	return out, nil
}

// markingOf reads a kernel port configuration back as a Marking, in bytes
// (its Rate is 0: the thresholds are the port's own).
func markingOf(pc switchbpfPortCfg) Marking {
	var m Marking
	if pc.EcnKmax == 0 {
		m.Threshold = units.Size(pc.EcnK)
	} else {
		m.RED = RED{Kmin: units.Size(pc.EcnK), Kmax: units.Size(pc.EcnKmax), Pmax: float64(pc.EcnPmaxPpm) / 1e6}
	}
	if pc.QcnQeq != 0 {
		m.QCN = QCN{Qeq: units.Size(pc.QcnQeq), Sample: units.Size(pc.QcnSample)}
	}
	if pc.TcdMaxTonNs != 0 {
		m.TCD = TCD{MaxTon: time.Duration(pc.TcdMaxTonNs), Threshold: units.Size(pc.TcdK)}
	}
	return m
}

// Mode is how the switch's tc programs are attached: AttachTCX or
// AttachClassic.
func (s *Switch) Mode() AttachMode { return s.mode }

func keyOf(i iface) switchbpfPortKey {
	return switchbpfPortKey{NetnsCookie: i.cookie, Ifindex: uint32(i.ifindex)}
}

// attachTCX attaches prog to an interface; the ifindex means something only
// inside the interface's namespace, so the link is made from there. The
// egress counter goes last (after the delay's take of path placement); the
// ingress stamp goes first, before the delay's take of link placement,
// so that it stamps the packet as it arrives from the upstream's queue.
func (s *Switch) attachTCX(i iface, prog *ebpf.Program, at ebpf.AttachType) error {
	anchor := link.Tail()
	if at == ebpf.AttachTCXIngress {
		anchor = link.Head()
	}
	return nsexec.Do(i.netns, func() error {
		l, err := link.AttachTCX(link.TCXOptions{
			Interface: i.ifindex, Program: prog, Attach: at, Anchor: anchor,
		})
		if err != nil {
			return fmt.Errorf("attach %s to %s in %s: %w", prog, i.name, i.netns, err)
		}
		s.links = append(s.links, l)
		return nil
	})
}

// Close stops sampling, detaches every program and frees the maps (or,
// with a Cache, gives the programs and maps back to it).
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
	// Last added first: the filter that added a clsact qdisc goes last
	// and takes the qdisc with it.
	for i := len(s.filters) - 1; i >= 0; i-- {
		if err := s.filters[i].detach(); err != nil {
			errs = append(errs, err)
		}
	}
	s.filters = nil
	if s.cache != nil && s.objs.PortStates != nil && len(s.tcProgs) > 0 {
		// Detached: the programs and maps go back for the next Attach.
		l := &loadedSet{ports: len(s.ports), objs: s.objs, tcProgs: s.tcProgs}
		s.objs, s.tcProgs = objects{}, nil
		if !s.cache.put(l) {
			errs = append(errs, l.close())
		}
		return errors.Join(errs...)
	}
	for _, p := range s.tcProgs {
		if err := errors.Join(p.Enqueue.Close(), p.Stamp.Close()); err != nil {
			errs = append(errs, fmt.Errorf("close tc programs: %w", err))
		}
	}
	s.tcProgs = nil
	if err := s.stamper.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close stamper: %w", err))
	}
	s.stamper = nil
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
	QCNSampled     uint64 // QCN congestion point: packets sampled
	QCNFeedback    uint64 // ... negative feedback generated
	QCNReplaced    uint64 // ... replacing one no ACK of its flow had taken yet
	QCNNoData      uint64 // ... negative samples of packets without TCP data (no ACK carries them)
	QCNCarried     uint64 // QCN feedback (any CP's) written into ACKs leaving here
	UEMarked       uint64 // TCD: packets stamped with U (the port undetermined)
	// Late counts packets that reached the peer without a snapshot from
	// the transmit tracepoint (a few in a thousand under load, cause
	// unknown; or one evicted from the in-flight map): counted as
	// transmitted there, and stamped with the port's state on arrival.
	Late uint64
	// ClockAhead counts packets the qdisc let go before the port's link,
	// at its rate, would have finished the ones before: their records
	// carry the link's time, not the dequeue's (tcopt/README.md, ts).
	ClockAhead uint64
	// ClockLeadMax is the furthest the link's clock was ahead of the
	// qdisc's dequeue (ns): how far the emulation ran ahead of the port.
	ClockLeadMax uint64
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
			QCNSampled: r.QcnSampled, QCNFeedback: r.QcnFb, QCNReplaced: r.QcnReplaced,
			QCNNoData: r.QcnNoData, QCNCarried: r.QcnCarried, UEMarked: r.UeMarked,
			ClockAhead: r.ClockAhead, ClockLeadMax: r.ClockLeadMax,
		}
	}
	return out, nil
}

// readStates reads the ports' states from the mapped state array: no
// system call, so the sampler can read every millisecond on the packet
// CPU at little cost (docs/performance.md, "Where the packet CPU goes").
func (s *Switch) readStates() ([]switchbpfPortState, error) {
	vals := make([]switchbpfPortState, len(s.ports))
	return vals, s.readStatesInto(vals)
}

// readStatesInto fills vals (one per port, in the config's order).
func (s *Switch) readStatesInto(vals []switchbpfPortState) error {
	if len(vals) == 0 {
		return nil
	}
	mem, err := s.objs.PortStates.Memory()
	if err != nil {
		return fmt.Errorf("map switch port states: %w", err)
	}
	size := int(unsafe.Sizeof(vals[0]))
	b := unsafe.Slice((*byte)(unsafe.Pointer(&vals[0])), len(vals)*size)
	if _, err := mem.ReadAt(b, 0); err != nil {
		return fmt.Errorf("read switch port states: %w", err)
	}
	return nil
}

// TracepointMisses counts the times the kernel skipped a tracing program
// because that program was already running on the CPU (BPF recursion
// protection): the outer run was interrupted and the interrupt's softirq
// hit the same tracepoint. A missed transmission is counted late at the
// peer's ingress (Stats' Late), so its bytes are not lost; a missed qdisc
// drop leaves the drop counters (and CountedQueue) one packet short for
// good, never the queue INT reports (the qdisc's backlog); most kfree_skb
// calls are not qdisc drops, so a Drop miss is rarely one.
// The counts are machine-wide: the programs run for every packet on the
// machine before they look for the switch's ports, so other traffic
// (another run, a VM's TAP) is counted too.
type TracepointMisses struct {
	Drop uint64 `json:"drop"` // kfree_skb
	Xmit uint64 `json:"xmit"` // net_dev_start_xmit
}

// TracepointMisses reads the two programs' recursion-miss counters.
func (s *Switch) TracepointMisses() (TracepointMisses, error) {
	var m TracepointMisses
	for _, p := range []struct {
		prog *ebpf.Program
		n    *uint64
	}{{s.objs.IntSwitchDrop, &m.Drop}, {s.objs.IntSwitchXmit, &m.Xmit}} {
		st, err := p.prog.Stats()
		if err != nil {
			return TracepointMisses{}, fmt.Errorf("switch program stats: %w", err)
		}
		*p.n = st.RecursionMisses
	}
	return m, nil
}
