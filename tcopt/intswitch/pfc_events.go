package intswitch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cilium/ebpf/ringbuf"

	"cclab/internal/units"
)

// PFCKind is a crossing of an ingress port's thresholds.
type PFCKind uint32

// The crossings (PFC_XOFF, PFC_XON in tcopt/swunit/pfc.h).
const (
	PFCXoff PFCKind = 1 // the occupancy went above Xoff: pause the upstream
	PFCXon  PFCKind = 2 // it fell to Xon: resume it
)

func (k PFCKind) String() string {
	switch k {
	case PFCXoff:
		return "xoff"
	case PFCXon:
		return "xon"
	}
	return fmt.Sprintf("PFCKind(%d)", uint32(k))
}

// A PFCEvent is one crossing, as the switch posted it.
type PFCEvent struct {
	// Ns is when the packet crossed it: bpf_ktime_get_ns, CLOCK_MONOTONIC.
	Ns   uint64
	Kind PFCKind
	// Port is the ingress port: its switch and interface, and its
	// upstream (PeerNode, PeerIface), whose egress the pause is for.
	Port      PortConfig
	Occupancy units.Size // the ingress queue at the crossing
	Threshold units.Size // the Xoff or Xon it crossed
}

// pfcEventSize is sizeof(struct pfc_event) in switch_maps.h.
const pfcEventSize = 32

// PFCEvents reads the switch's crossings in the order they were posted.
type PFCEvents struct {
	r     *ringbuf.Reader
	ports []PortConfig
}

// PFCEvents opens a reader of the switch's crossings. One reader at a
// time; Close it before the switch.
func (s *Switch) PFCEvents() (*PFCEvents, error) {
	r, err := ringbuf.NewReader(s.objs.PfcEvents)
	if err != nil {
		return nil, fmt.Errorf("open PFC events: %w", err)
	}
	return &PFCEvents{r: r, ports: s.ports}, nil
}

// Read returns the next crossing, waiting for one until deadline (the
// zero time: no limit); os.ErrDeadlineExceeded when none came.
func (e *PFCEvents) Read(deadline time.Time) (PFCEvent, error) {
	e.r.SetDeadline(deadline)
	rec, err := e.r.Read()
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return PFCEvent{}, err
		}
		return PFCEvent{}, fmt.Errorf("read PFC event: %w", err)
	}
	return e.decode(rec.RawSample)
}

func (e *PFCEvents) decode(b []byte) (PFCEvent, error) {
	if len(b) < pfcEventSize {
		return PFCEvent{}, fmt.Errorf("PFC event of %d bytes, want %d", len(b), pfcEventSize)
	}
	le := binary.LittleEndian // bpfel
	port := le.Uint32(b[24:])
	if int(port) >= len(e.ports) {
		return PFCEvent{}, fmt.Errorf("PFC event of port slot %d, the switch has %d", port, len(e.ports))
	}
	return PFCEvent{
		Ns: le.Uint64(b[0:]), Occupancy: units.Size(le.Uint64(b[8:])),
		Threshold: units.Size(le.Uint64(b[16:])), Port: e.ports[port], Kind: PFCKind(le.Uint32(b[28:])),
	}, nil
}

// Close stops reading (a Read waiting returns ringbuf.ErrClosed).
func (e *PFCEvents) Close() error { return e.r.Close() }

// drainPFCEvents drops what a cached set's ring buffer still holds from
// the switch before.
func (o *objects) drainPFCEvents() error {
	r, err := ringbuf.NewReader(o.PfcEvents)
	if err != nil {
		return err
	}
	defer r.Close()
	r.SetDeadline(time.Now())
	for {
		if _, err := r.Read(); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return nil
			}
			return err
		}
	}
}

// PFCPort is one ingress port of a lossless switch as the switch counts
// it.
type PFCPort struct {
	Node, Iface string
	// Occupancy is the port's ingress queue: its share of each of the
	// switch's egress backlogs, split by the bytes counted from it (the
	// kernel's formula, pfc_occupancy, over one read of the maps; the
	// read is not atomic, so each row's total is the row's own sum, and the
	// occupancies of a switch sum to its backlog).
	Occupancy  units.Size
	Paused     bool   // Xoff posted, Xon not yet
	Xoffs      uint64 // Xoff crossings posted
	Xons       uint64
	LostEvents uint64 // crossings the ring buffer had no room for
	// MaxOver is the most the occupancy was above the Xoff threshold a
	// pause was posted at, while paused: what arrived after the Xoff (a
	// dynamic threshold falling meanwhile does not count).
	MaxOver units.Size
}

// PFCSwitch is a lossless switch's buffer as it counts it.
type PFCSwitch struct {
	// Used is sw_used, the shared buffer's fill the dynamic threshold
	// reads: the sum of the backlogs its ports last saw.
	Used units.Size
	// Backlog is the sum of those backlogs as this read found them
	// (what its ports' occupancies split).
	Backlog units.Size
}

// PFCPorts reads every port's ingress accounting, in the config's order,
// and each switch's buffer by node; nil when PFC is off.
func (s *Switch) PFCPorts() ([]PFCPort, map[string]PFCSwitch, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pfc.members == nil {
		return nil, nil, nil
	}
	n := len(s.ports)
	states := make([]switchbpfPfcState, n)
	for i := range states {
		if err := s.objs.PfcStates.Lookup(uint32(i), &states[i]); err != nil {
			return nil, nil, fmt.Errorf("read PFC state of %s/%s: %w", s.ports[i].Node, s.ports[i].Iface, err)
		}
	}
	out := make([]PFCPort, n)
	used := map[string]PFCSwitch{}
	for sw, members := range s.pfc.members {
		var v switchbpfPfcSwitch
		if err := s.objs.SwUsed.Lookup(uint32(sw), &v); err != nil {
			return nil, nil, fmt.Errorf("read used buffer of %s: %w", s.ports[members[0]].Node, err)
		}
		var backlog uint64
		for _, e := range members {
			backlog += states[e].SeenBacklog
		}
		used[s.ports[members[0]].Node] = PFCSwitch{Used: units.Size(v.Used), Backlog: units.Size(backlog)}
		rows := make([][]uint64, len(members))
		for j, e := range members {
			rows[j] = make([]uint64, len(members))
			for l := range members {
				if err := s.objs.IngressBytes.Lookup(e*MaxPFCPorts+uint32(l), &rows[j][l]); err != nil {
					return nil, nil, fmt.Errorf("read ingress bytes of %s/%s: %w", s.ports[e].Node, s.ports[e].Iface, err)
				}
			}
		}
		for l, i := range members {
			var occ uint64
			for j, e := range members {
				var total uint64
				for _, b := range rows[j] {
					total += b
				}
				occ += pfcShare(states[e].SeenBacklog, rows[j][l], total)
			}
			st := states[i]
			out[i] = PFCPort{
				Node: s.ports[i].Node, Iface: s.ports[i].Iface, Occupancy: units.Size(occ),
				Paused: st.Paused != 0, Xoffs: st.Xoffs, Xons: st.Xons,
				LostEvents: st.LostEvents, MaxOver: units.Size(st.MaxOver),
			}
		}
	}
	return out, used, nil
}

// pfcShare is pfc_share (tcopt/swunit/pfc.h), for reading the maps as the
// kernel does.
func pfcShare(backlog, part, total uint64) uint64 {
	const partMax = 1 << 32
	if total == 0 || part == 0 {
		return 0
	}
	if part >= total {
		return backlog
	}
	for range 2 {
		if total >= partMax {
			total >>= 16
			part >>= 16
		}
	}
	backlog = min(backlog, partMax-1)
	if total == 0 {
		return 0
	}
	return backlog * part / total
}
