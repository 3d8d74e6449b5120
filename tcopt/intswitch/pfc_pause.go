package intswitch

import (
	"encoding/binary"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
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

// PauseStates maps the switch's port states for a writer outside Go (the
// PFC controller's timing thread, orchestrator/pfc): the mapping, which
// the caller unmaps (unix.Munmap), the size of one port's state, and the
// offsets of its `paused` and `last_xon_ns` fields. Port i's state is at
// i x stride (Slot gives i).
func (s *Switch) PauseStates() (mem []byte, stride, pausedOff, lastXonOff uintptr, err error) {
	var st switchbpfPortState
	stride = unsafe.Sizeof(st)
	size := int(stride) * int(s.objs.PortStates.MaxEntries())
	page := os.Getpagesize()
	size = (size + page - 1) / page * page
	mem, err = unix.Mmap(s.objs.PortStates.FD(), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, 0, 0, 0, fmt.Errorf("map port states: %w", err)
	}
	return mem, stride, unsafe.Offsetof(st.Paused), unsafe.Offsetof(st.LastXonNs), nil
}

// Slot is the index of port node/iface in the switch's ports (its state,
// its crossings' port), or -1; NumPorts how many there are.
func (s *Switch) Slot(node, iface string) int {
	for i, p := range s.ports {
		if p.Node == node && p.Iface == iface {
			return i
		}
	}
	return -1
}

// NumPorts is how many ports the switch has.
func (s *Switch) NumPorts() int { return len(s.ports) }

// PFCRing is the crossings' ring buffer for a reader outside Go: its
// file descriptor and its data size (a power of two), to be mapped as the
// kernel's ring buffer maps are (consumer page, then producer page and
// the data twice). One reader at a time, PFCEvents' or this.
func (s *Switch) PFCRing() (fd int, size uint32) {
	return s.objs.PfcEvents.FD(), s.objs.PfcEvents.MaxEntries()
}
