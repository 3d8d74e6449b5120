// Package intswitch loads the cclab INT software switch (tcopt/bpf/switch.bpf.c)
// onto the egress ports of an emulated network's switches: it measures each
// port's queue, stamps INT records into TCP packets at dequeue, marks ECN
// (a step above a threshold, or RED's probabilistic profile), and samples
// per-port queue telemetry for queues.csv. How and with what limits:
// README.md in this directory.
//
// The directory is tcopt/intswitch; the package is intswitch because "switch"
// is a Go keyword.
package intswitch

import (
	"fmt"
	"math"
	"math/bits"
	"time"

	"cclab/internal/units"
	"cclab/topology"
)

// A PortConfig names one switch egress port: a veth end in a switch's
// namespace, and its peer, where the port's packets arrive once the qdisc
// has transmitted them (the dequeue hook runs there).
type PortConfig struct {
	Node      string // switch node owning the port
	Iface     string // the port's interface in Node's namespace
	PeerNode  string // node at the other end of the link (host or switch)
	PeerIface string // the peer's interface
	// Rate is the port's shaped rate, stamped as its INT rate code (a rate
	// that is not a whole number of Mbit/s listed in tcopt/README.md is
	// stamped as code 0, which readers ignore).
	Rate units.Rate
	// ECNThreshold CE-marks ECN-capable packets leaving while more than
	// this many bytes are queued behind them (a step, DCTCP's K). 0 turns
	// it off.
	ECNThreshold units.Size
	// ECNRed marks with RED's profile instead (DCQCN); the zero value is
	// none. At most one of ECNThreshold and ECNRed is set.
	ECNRed RED
	// QCN makes the port a QCN congestion point; the zero value is none.
	QCN QCN
	// TCD judges the port's ternary state (TCD); the zero value is off.
	TCD TCD
}

// Marking is the port's congestion feedback: ECN marking, QCN and TCD.
func (p PortConfig) Marking() Marking {
	return Marking{Threshold: p.ECNThreshold, RED: p.ECNRed, QCN: p.QCN, TCD: p.TCD}
}

// TCD is ternary congestion detection at the port (tcopt/swunit/tcd_state.h,
// docs/lossless.md): with q the bytes queued behind a packet at dequeue,
// the port is non-congestion (q <= Threshold: no mark), undetermined
// (q > Threshold and paused, or ON for less than MaxTon since its last
// resume: U in the INT header, never CE) or congestion (q > Threshold
// otherwise: CE as the port's ECN profile decides). With TCD on the port
// writes every INT option it stamps as v1 (tcopt/README.md). The pause
// state it reads (port_state's paused and last_xon_ns) is the PFC
// controller's to write.
type TCD struct {
	MaxTon    time.Duration // max(T_on); 0: TCD off
	Threshold units.Size    // K
}

// On reports whether TCD is on.
func (t TCD) On() bool { return t.MaxTon != 0 }

func (t TCD) validate() error {
	if t == (TCD{}) {
		return nil
	}
	if t.MaxTon <= 0 {
		return fmt.Errorf("TCD: max_ton %v must be positive", t.MaxTon)
	}
	if t.Threshold == 0 || t.Threshold > maxQueue {
		return fmt.Errorf("TCD: threshold %v must be in 1B..%v", t.Threshold, maxQueue)
	}
	return nil
}

// QCN is an IEEE 802.1Qau congestion point (the QCN paper's section II):
// the port samples arriving packets about every Sample bytes (randomised
// by +-15 %), computes fb = -((Q - Qeq) + 2 (Q - Qold)) from its queue Q
// and the queue at the last sample, and when fb is negative keeps |fb|,
// capped at 5 Qeq and quantised to 6 bits, as a QCN feedback record
// (tcopt/README.md) for the sampled packet's flow, which a switch writes
// into the free slot of the flow's next ACK echo for the sender's reaction
// point (the qcn and qcn_t laws).
type QCN struct {
	Qeq units.Size // the equilibrium queue; 0: no congestion point
	// Sample is the bytes between samples; 0 means DefaultQCNSample.
	Sample units.Size
	// Rate, when set, is the port rate Qeq and Sample are given for: each
	// port scales them by its own rate / Rate. 0: the same bytes on every
	// port.
	Rate units.Rate
}

// DefaultQCNSample is the standard's sampling interval: 150 KB.
const DefaultQCNSample = units.Size(150_000)

// On reports whether the port is a congestion point.
func (q QCN) On() bool { return q.Qeq != 0 }

func (q QCN) validate() error {
	if q == (QCN{}) {
		return nil
	}
	if q.Qeq == 0 {
		return fmt.Errorf("QCN congestion point: qeq is required")
	}
	if q.Rate == 0 && (q.Qeq > maxQCNBytes || q.sample() > maxQCNBytes) {
		return fmt.Errorf("QCN congestion point: qeq %v and sample %v must be at most %v", q.Qeq, q.sample(), maxQCNBytes)
	}
	return nil
}

func (q QCN) sample() units.Size {
	if q.Sample == 0 {
		return DefaultQCNSample
	}
	return q.Sample
}

// maxQCNBytes bounds Qeq and the sampling interval (32-bit in the kernel;
// a queue of 5 Qeq must stay measurable).
const maxQCNBytes = units.Size(1 << 29)

// RED is a probabilistic ECN marking profile, RED's shape as DCQCN's
// switches use it: with q bytes queued behind a packet at dequeue, no mark
// while q <= Kmin, a mark with probability Pmax*(q-Kmin)/(Kmax-Kmin) while
// Kmin < q <= Kmax, and a mark on every ECN-capable packet above Kmax.
type RED struct {
	Kmin, Kmax units.Size
	Pmax       float64 // in (0, 1]; the kernel keeps it in parts per million
	// Rate, when set, is the port rate Kmin and Kmax are given for: each
	// port scales them by its own rate / Rate (HPCC's settings are 100KB
	// and 400KB for 25 Gbit/s). 0: the same bytes on every port.
	Rate units.Rate
}

// On reports whether the profile is set (its zero value is none).
func (r RED) On() bool { return r != RED{} }

// A Marking is how a port signals congestion: it CE-marks ECN-capable
// packets at dequeue not at all (the zero value), as a step above
// Threshold, or with a RED profile; and it may be a QCN congestion point.
type Marking struct {
	Threshold units.Size
	RED       RED
	QCN       QCN
	TCD       TCD
}

// maxQueue is the largest queue the switch can measure: the root qdisc's
// backlog is a 32-bit count of bytes.
const maxQueue = units.Size(1<<32 - 1)

// validate checks the profile itself, whatever the port.
func (m Marking) validate() error {
	if err := m.QCN.validate(); err != nil {
		return err
	}
	if err := m.TCD.validate(); err != nil {
		return err
	}
	if !m.RED.On() {
		return nil
	}
	r := m.RED
	if m.Threshold != 0 {
		return fmt.Errorf("ECN marking: a threshold (%v) and a RED profile; give one", m.Threshold)
	}
	if r.Kmin >= r.Kmax {
		return fmt.Errorf("ECN RED profile: kmin %v is not below kmax %v", r.Kmin, r.Kmax)
	}
	if r.Rate == 0 && r.Kmax > maxQueue {
		return fmt.Errorf("ECN RED profile: kmax %v is beyond any queue the switch measures (%v)", r.Kmax, maxQueue)
	}
	if !(r.Pmax >= 1e-6 && r.Pmax <= 1) {
		return fmt.Errorf("ECN RED profile: pmax %v is outside 0.000001..1", r.Pmax)
	}
	return nil
}

// Check reports whether a port of the given rate can mark with m (RED's
// thresholds scaled to that rate must stay apart), as Attach and
// SetMarking check it.
func (m Marking) Check(rate units.Rate) error {
	_, err := m.portCfg(rate)
	return err
}

// portCfg is the kernel's configuration of a port of the given rate with
// this profile (switch_maps.h): RED's thresholds scaled to the port.
func (m Marking) portCfg(rate units.Rate) (switchbpfPortCfg, error) {
	pc := switchbpfPortCfg{EcnK: uint64(m.Threshold), RateMbps: rateMbps(rate)}
	if err := m.validate(); err != nil {
		return pc, err
	}
	if err := m.QCN.portCfg(&pc, rate); err != nil {
		return pc, err
	}
	pc.TcdMaxTonNs, pc.TcdK = uint64(m.TCD.MaxTon.Nanoseconds()), uint64(m.TCD.Threshold)
	if !m.RED.On() {
		return pc, nil
	}
	r := m.RED
	kmin, kmax := uint64(r.Kmin), uint64(r.Kmax)
	if r.Rate != 0 {
		if rate == 0 {
			return pc, fmt.Errorf("ECN RED profile for %v ports: the port has no rate to scale it by", r.Rate)
		}
		var err error
		if kmin, err = scaleBytes(kmin, rate, r.Rate); err == nil {
			kmax, err = scaleBytes(kmax, rate, r.Rate)
		}
		if err != nil {
			return pc, fmt.Errorf("ECN RED profile scaled to %v: %w", rate, err)
		}
		if kmin >= kmax {
			return pc, fmt.Errorf("ECN RED profile scaled to %v: kmin %dB is not below kmax %dB", rate, kmin, kmax)
		}
		if kmax > uint64(maxQueue) {
			return pc, fmt.Errorf("ECN RED profile scaled to %v: kmax %dB is beyond any queue the switch measures", rate, kmax)
		}
	}
	pc.EcnK, pc.EcnKmax = kmin, kmax
	pc.EcnPmaxPpm = uint32(math.Round(r.Pmax * 1e6))
	return pc, nil
}

// portCfg fills the congestion point's part of a port's configuration,
// scaled to the port's rate when q.Rate is set.
func (q QCN) portCfg(pc *switchbpfPortCfg, rate units.Rate) error {
	if !q.On() {
		return nil
	}
	qeq, every := uint64(q.Qeq), uint64(q.sample())
	if q.Rate != 0 {
		if rate == 0 {
			return fmt.Errorf("QCN congestion point for %v ports: the port has no rate to scale it by", q.Rate)
		}
		var err error
		if qeq, err = scaleBytes(qeq, rate, q.Rate); err == nil {
			every, err = scaleBytes(every, rate, q.Rate)
		}
		if err != nil {
			return fmt.Errorf("QCN congestion point scaled to %v: %w", rate, err)
		}
		if qeq == 0 || every == 0 || qeq > uint64(maxQCNBytes) || every > uint64(maxQCNBytes) {
			return fmt.Errorf("QCN congestion point scaled to %v: qeq %dB and sample %dB must be in 1B..%v", rate, qeq, every, maxQCNBytes)
		}
	}
	pc.QcnQeq, pc.QcnSample = uint32(qeq), uint32(every)
	return nil
}

// scaleBytes is b * rate / ref, rounded down, without overflow.
func scaleBytes(b uint64, rate, ref units.Rate) (uint64, error) {
	hi, lo := bits.Mul64(b, rate.BitsPerSecond())
	if hi >= ref.BitsPerSecond() {
		return 0, fmt.Errorf("%dB out of range", b)
	}
	q, _ := bits.Div64(hi, lo, ref.BitsPerSecond())
	return q, nil
}

// Config is what Attach needs.
type Config struct {
	// Netns returns the namespace name (as in /run/netns) of a node.
	Netns func(node string) string
	Ports []PortConfig
	// Attach chooses tcx links or classic cls_bpf filters; the zero
	// value, AttachAuto, takes tcx where the kernel has it.
	Attach AttachMode
	// PFC makes every switch of the config lossless (the zero value:
	// lossy). A switch is the ports of one Node.
	PFC PFC
	// Cache, when set, lends verified programs and maps from an earlier
	// Switch and takes them back at Close (nil: load and free them here).
	Cache *Cache
}

// maxPorts matches SWITCH_MAX_PORTS in tcopt/bpf/switch_maps.h.
const maxPorts = 4096

func (c *Config) validate() error {
	if c.Netns == nil {
		return fmt.Errorf("switch config: no Netns function")
	}
	if len(c.Ports) == 0 {
		return fmt.Errorf("switch config: no ports")
	}
	if c.Attach < AttachAuto || c.Attach > AttachClassic {
		return fmt.Errorf("switch config: unknown attach mode %d", int(c.Attach))
	}
	if len(c.Ports) > maxPorts {
		return fmt.Errorf("switch config: %d ports, at most %d", len(c.Ports), maxPorts)
	}
	if err := c.PFC.validate(); err != nil {
		return fmt.Errorf("switch config: %w", err)
	}
	if c.PFC.On() {
		if _, err := layoutPFC(c.Ports); err != nil {
			return fmt.Errorf("switch config: %w", err)
		}
	}
	egress := map[[2]string]bool{}
	peers := map[[2]string]bool{}
	for i, p := range c.Ports {
		if p.Node == "" || p.Iface == "" || p.PeerNode == "" || p.PeerIface == "" {
			return fmt.Errorf("switch port %d: node, iface, peer node and peer iface are all required", i)
		}
		if len(p.Iface) > 15 || len(p.PeerIface) > 15 {
			return fmt.Errorf("switch port %s/%s: interface names are at most 15 characters", p.Node, p.Iface)
		}
		if p.Node == p.PeerNode {
			return fmt.Errorf("switch port %s/%s: peer is on the same node", p.Node, p.Iface)
		}
		e := [2]string{p.Node, p.Iface}
		if egress[e] {
			return fmt.Errorf("switch port %s/%s listed twice", p.Node, p.Iface)
		}
		egress[e] = true
		q := [2]string{p.PeerNode, p.PeerIface}
		if peers[q] {
			return fmt.Errorf("switch port %s/%s: peer %s/%s already fed by another port", p.Node, p.Iface, p.PeerNode, p.PeerIface)
		}
		peers[q] = true
		if _, err := p.Marking().portCfg(p.Rate); err != nil {
			return fmt.Errorf("switch port %s/%s: %w", p.Node, p.Iface, err)
		}
	}
	return nil
}

// PortsFromPlan returns a PortConfig for every link end on a switch node of
// the plan, with the link's rate and the given ECN marking (zero: none).
func PortsFromPlan(p *topology.Plan, m Marking) []PortConfig {
	isSwitch := map[string]bool{}
	for _, n := range p.Nodes {
		if n.Role == topology.Switch {
			isSwitch[n.Name] = true
		}
	}
	var ports []PortConfig
	for _, l := range p.Links {
		for _, end := range [2][2]topology.Port{{l.A, l.B}, {l.B, l.A}} {
			if !isSwitch[end[0].Node] {
				continue
			}
			ports = append(ports, PortConfig{
				Node: end[0].Node, Iface: end[0].Iface,
				PeerNode: end[1].Node, PeerIface: end[1].Iface,
				Rate: l.Rate, ECNThreshold: m.Threshold, ECNRed: m.RED, QCN: m.QCN, TCD: m.TCD,
			})
		}
	}
	return ports
}

// rateMbps is the rate in whole Mbit/s, or 0 when it is not one.
func rateMbps(r units.Rate) uint32 {
	bps := r.BitsPerSecond()
	if bps%1_000_000 != 0 || bps/1_000_000 > 1<<31 {
		return 0
	}
	return uint32(bps / 1_000_000)
}
