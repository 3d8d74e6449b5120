package intswitch

import (
	"fmt"
	"math"
	"time"

	"cclab/internal/units"
)

// PFCMode is how a lossless switch decides to pause an ingress port
// (tcopt/swunit/pfc.h).
type PFCMode int

// The modes; the zero value is a lossy fabric.
const (
	PFCOff     PFCMode = iota // lossy: no accounting, no pauses
	PFCStatic                 // pause above Xoff, resume at Xon
	PFCDynamic                // HPCC's: pause above Alpha of the free shared buffer
)

func (m PFCMode) String() string {
	switch m {
	case PFCOff:
		return "off"
	case PFCStatic:
		return "static"
	case PFCDynamic:
		return "dynamic"
	}
	return fmt.Sprintf("PFCMode(%d)", int(m))
}

// MaxPFCPorts matches PFC_MAX_LOCAL in tcopt/bpf/switch_maps.h: the ports
// of one lossless switch.
const MaxPFCPorts = 32

// PFC is priority flow control at every switch of the config
// (docs/lossless.md): each switch counts, per ingress port, the bytes that
// arrived there and still sit in any of its egress queues, and posts an
// Xoff event when that occupancy goes above Xoff and an Xon event when it
// falls to Xon (PFCEvents). The pause itself is the controller's
// (orchestrator/pfc's actuator). The zero value is off.
type PFC struct {
	Mode PFCMode
	// Static: Xoff and Xon (below Xoff), bytes of one ingress port.
	Xoff, Xon units.Size
	// Dynamic: Xoff = Alpha * (Buffer - used), used the bytes queued in
	// all the switch's ports; Xon = Xoff - Hysteresis (at least 0).
	Alpha      float64
	Hysteresis units.Size
	// Buffer is each switch's shared buffer B (dynamic mode; its ports'
	// FIFOs hold up to B each, so that only PFC bounds them).
	Buffer units.Size
	// Headroom is what a port can take above Xoff: the run's check of
	// overruns compares with it (Headroom gives the usual value).
	Headroom units.Size
}

// HPCCAlpha is HPCC's dynamic threshold: "PFC is triggered when an
// ingress queue consumes more than 11% of the free buffer".
const HPCCAlpha = 0.11

// MTUFrame is the largest frame on a lossless port (offloads off).
const MTUFrame = 1514

// Headroom is what arrives at an ingress port after its Xoff: the pause's
// flight and the data on the wire, 2 x delay x rate, and the frame the
// upstream is sending when the pause lands and the one being received at
// Xoff (2 MTU). tcopt/swunit/pfc.h's pfc_headroom, which TestPFCHeadroom
// holds to docs/lossless.md's table.
func Headroom(delay time.Duration, rate units.Rate) units.Size {
	flight := 2 * float64(delay.Nanoseconds()) * float64(rate.BitsPerSecond()) / 8e9
	return units.Size(math.Floor(flight)) + 2*MTUFrame
}

// On reports whether the fabric is lossless.
func (p PFC) On() bool { return p.Mode != PFCOff }

func (p PFC) validate() error {
	switch p.Mode {
	case PFCOff:
		if p != (PFC{}) {
			return fmt.Errorf("PFC: settings without a mode")
		}
		return nil
	case PFCStatic:
		if p.Xoff == 0 || p.Xon >= p.Xoff {
			return fmt.Errorf("PFC static: xoff %v must be above 0 and above xon %v", p.Xoff, p.Xon)
		}
		if p.Xoff > maxQueue {
			return fmt.Errorf("PFC static: xoff %v is beyond any queue the switch measures (%v)", p.Xoff, maxQueue)
		}
	case PFCDynamic:
		if !(p.Alpha > 0 && p.Alpha <= 1) {
			return fmt.Errorf("PFC dynamic: alpha %v is outside (0, 1]", p.Alpha)
		}
		if p.Buffer == 0 || p.Buffer > maxQueue {
			return fmt.Errorf("PFC dynamic: the shared buffer %v must be in 1B..%v", p.Buffer, maxQueue)
		}
	default:
		return fmt.Errorf("PFC: unknown mode %d", int(p.Mode))
	}
	return nil
}

// pfcLayout numbers a lossless fabric: each switch (a port's Node) an
// index, each of its ports a local index in it, in the config's order.
type pfcLayout struct {
	sw, local []uint32 // per port slot
	members   [][]uint32
}

func layoutPFC(ports []PortConfig) (pfcLayout, error) {
	l := pfcLayout{sw: make([]uint32, len(ports)), local: make([]uint32, len(ports))}
	index := map[string]uint32{}
	for i, p := range ports {
		s, ok := index[p.Node]
		if !ok {
			s = uint32(len(l.members))
			index[p.Node] = s
			l.members = append(l.members, nil)
		}
		if len(l.members[s]) == MaxPFCPorts {
			return pfcLayout{}, fmt.Errorf("PFC: switch %s has more than %d ports", p.Node, MaxPFCPorts)
		}
		l.sw[i], l.local[i] = s, uint32(len(l.members[s]))
		l.members[s] = append(l.members[s], uint32(i))
	}
	return l, nil
}

// configurePFC writes the lossless fabric's maps (switch_maps.h): every
// port's pfc_cfg with its upstream (the peer feeding it), the switches'
// members and buffers, and the interfaces packets arrive on. Nothing is
// written when PFC is off: the programs then skip every port.
func (s *Switch) configurePFC(p PFC, egress, peers []iface) error {
	if !p.On() {
		return nil
	}
	l, err := layoutPFC(s.ports)
	if err != nil {
		return err
	}
	for i := range s.ports {
		c := switchbpfPfcCfg{
			Mode: uint32(p.Mode), Sw: l.sw[i], Local: l.local[i],
			AlphaPpm: uint32(math.Round(p.Alpha * 1e6)),
			Xoff:     uint64(p.Xoff), Xon: uint64(p.Xon), Hysteresis: uint64(p.Hysteresis),
			Headroom: uint64(p.Headroom), Upstream: keyOf(peers[i]),
		}
		if err := s.objs.PfcCfgs.Put(uint32(i), &c); err != nil {
			return fmt.Errorf("PFC config of %s/%s: %w", s.ports[i].Node, s.ports[i].Iface, err)
		}
		k := switchbpfPfcIface{Sw: l.sw[i], Ifindex: uint32(egress[i].ifindex)}
		if err := s.objs.PfcIfaces.Put(&k, uint32(i)); err != nil {
			return fmt.Errorf("PFC ingress of %s/%s: %w", s.ports[i].Node, s.ports[i].Iface, err)
		}
	}
	for sw, members := range l.members {
		for local, slot := range members {
			if err := s.objs.PfcMembers.Put(uint32(sw*MaxPFCPorts+local), slot); err != nil {
				return fmt.Errorf("PFC ports of switch %s: %w", s.ports[slot].Node, err)
			}
		}
		v := switchbpfPfcSwitch{Buffer: uint64(p.Buffer), Nports: uint32(len(members))}
		if err := s.objs.SwUsed.Put(uint32(sw), &v); err != nil {
			return fmt.Errorf("PFC buffer of switch %s: %w", s.ports[members[0]].Node, err)
		}
	}
	s.pfc = l
	return nil
}
