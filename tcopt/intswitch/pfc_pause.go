package intswitch

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// SetPaused writes a port's PFC pause state into its port_state, where
// TCD reads it: paused, the port's egress is paused now; lastXonNs, the
// CLOCK_MONOTONIC time (bpf_ktime_get_ns) of its last resume, 0 for
// never. The pause controller (orchestrator/pfc) calls it after each
// change it applies to a switch port. The two fields are written in
// place in the mapped state array, each by one aligned store, and
// nothing else of the state: the programs' counters, bumped meanwhile,
// keep every increment. On a resume lastXonNs is written before paused
// goes to 0, so that a packet never sees the port unpaused with the
// resume before it missing.
func (s *Switch) SetPaused(node, iface string, paused bool, lastXonNs uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	slot := -1
	for i, p := range s.ports {
		if p.Node == node && p.Iface == iface {
			slot = i
			break
		}
	}
	if slot < 0 {
		return fmt.Errorf("set paused: the switch has no port %s/%s", node, iface)
	}
	mem, err := s.objs.PortStates.Memory()
	if err != nil {
		return fmt.Errorf("set paused %s/%s: map port states: %w", node, iface, err)
	}
	var st switchbpfPortState
	base := int64(slot) * int64(unsafe.Sizeof(st))
	var p [4]byte
	if paused {
		binary.NativeEndian.PutUint32(p[:], 1)
	}
	var x [8]byte
	binary.NativeEndian.PutUint64(x[:], lastXonNs)
	writes := []struct {
		b   []byte
		off uintptr
	}{{x[:], unsafe.Offsetof(st.LastXonNs)}, {p[:], unsafe.Offsetof(st.Paused)}}
	if paused {
		writes[0], writes[1] = writes[1], writes[0]
	}
	for _, w := range writes {
		if _, err := mem.WriteAt(w.b, base+int64(w.off)); err != nil {
			return fmt.Errorf("set paused %s/%s: write port state: %w", node, iface, err)
		}
	}
	return nil
}
