//go:build cgo

package pfc

/*
#cgo CFLAGS: -O2 -Wall
#include <stdlib.h>
#include <string.h>
#include "ctl.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"

	"cclab/tcopt/intswitch"
)

// ctlHeapCap bounds the crossings filed and not yet applied; ctlLogCap
// the changes a run records (40 B each: 10 MB).
const (
	ctlHeapCap = 4096
	ctlLogCap  = 1 << 18
)

// A thread is the C timing thread and everything it reads: C memory
// (the cgo rules: C keeps pointers for the whole run), the ring buffer's
// and the port states' mappings.
type thread struct {
	c      *C.struct_pfc_ctl
	cmem   []unsafe.Pointer
	maps   [][]byte
	stopFd int
	done   chan struct{}
}

func (t *thread) alloc(n uintptr) unsafe.Pointer {
	p := C.calloc(1, C.size_t(n))
	t.cmem = append(t.cmem, p)
	return p
}

func (t *thread) bytes(b []byte) *C.uint8_t {
	p := t.alloc(uintptr(len(b)))
	C.memcpy(p, unsafe.Pointer(&b[0]), C.size_t(len(b)))
	return (*C.uint8_t)(p)
}

// free releases what startThread made (the thread has ended).
func (t *thread) free() {
	for _, p := range t.cmem {
		C.free(p)
	}
	t.cmem = nil
	for _, m := range t.maps {
		_ = unix.Munmap(m)
	}
	t.maps = nil
	if t.stopFd >= 0 {
		unix.Close(t.stopFd)
		t.stopFd = -1
	}
}

// startThread prepares the C controller for ups (their actuators in
// acts) and starts its thread.
func startThread(sw *intswitch.Switch, ups []Upstream, acts []*Actuator, opt Options) (_ *thread, err error) {
	t := &thread{stopFd: -1, done: make(chan struct{})}
	defer func() {
		if err != nil {
			t.free()
		}
	}()
	c := (*C.struct_pfc_ctl)(t.alloc(C.sizeof_struct_pfc_ctl))
	t.c = c

	// The ring buffer, mapped as the kernel's ring buffers are.
	fd, size := sw.PFCRing()
	page := os.Getpagesize()
	cons, err := unix.Mmap(fd, 0, page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("pfc controller: map the crossings' consumer page: %w", err)
	}
	t.maps = append(t.maps, cons)
	prod, err := unix.Mmap(fd, int64(page), page+2*int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("pfc controller: map the crossings' ring: %w", err)
	}
	t.maps = append(t.maps, prod)
	c.cons = (*C.uint64_t)(unsafe.Pointer(&cons[0]))
	c.prod = (*C.uint64_t)(unsafe.Pointer(&prod[0]))
	c.data = (*C.uint8_t)(unsafe.Pointer(&prod[page]))
	c.mask = C.uint64_t(size - 1)

	states, stride, pausedOff, xonOff, err := sw.PauseStates()
	if err != nil {
		return nil, fmt.Errorf("pfc controller: %w", err)
	}
	t.maps = append(t.maps, states)

	nslots := sw.NumPorts()
	slotUp := unsafe.Slice((*C.int32_t)(t.alloc(uintptr(nslots)*4)), nslots)
	for i := range slotUp {
		slotUp[i] = -1
	}
	c.slot_up, c.nslots = &slotUp[0], C.uint32_t(nslots)

	nodes := map[string]C.uint32_t{}
	node := func(name string) C.uint32_t {
		if _, ok := nodes[name]; !ok {
			nodes[name] = C.uint32_t(len(nodes))
		}
		return nodes[name]
	}
	if len(ups) > 0 {
		ports := unsafe.Slice((*C.struct_pfc_ctl_port)(t.alloc(uintptr(len(ups))*C.sizeof_struct_pfc_ctl_port)), len(ups))
		for i, u := range ups {
			a, p := acts[i], &ports[i]
			slotUp[sw.Slot(u.Ingress.Node, u.Ingress.Iface)] = C.int32_t(i)
			p.nl_fd = C.int(a.sock.GetFd())
			p.pause_msg, p.pause_len = t.bytes(a.pauseMsg), C.uint32_t(len(a.pauseMsg))
			p.resume_msg, p.resume_len = t.bytes(a.resumeMsg), C.uint32_t(len(a.resumeMsg))
			p.kick_fd = C.int(a.kick.fd)
			C.memcpy(unsafe.Pointer(&p.kick_sa), unsafe.Pointer(&a.kick.raw), C.size_t(unsafe.Sizeof(a.kick.raw)))
			C.memcpy(unsafe.Pointer(&p.kick_frame[0]), unsafe.Pointer(&a.kick.frame[0]), C.PFC_CTL_KICK_LEN)
			p.delay_ns = C.uint64_t(u.Delay.Nanoseconds())
			p.node, p.peer_node = node(u.Ingress.Node), node(u.Ingress.PeerNode)
			if u.Host {
				p.host = 1
			} else {
				base := uintptr(sw.Slot(u.Ingress.PeerNode, u.Ingress.PeerIface)) * stride
				p.paused = (*C.uint32_t)(unsafe.Pointer(&states[base+pausedOff]))
				p.last_xon = (*C.uint64_t)(unsafe.Pointer(&states[base+xonOff]))
			}
		}
		c.ports, c.nports = &ports[0], C.uint32_t(len(ups))
	}
	c.heap = (*C.struct_pfc_ctl_item)(t.alloc(ctlHeapCap * C.sizeof_struct_pfc_ctl_item))
	c.heap_cap = ctlHeapCap
	c.log = (*C.struct_pfc_ctl_rec)(t.alloc(ctlLogCap * C.sizeof_struct_pfc_ctl_rec))
	c.log_cap = ctlLogCap
	c.cpu, c.prio = C.int(opt.CPU), C.int(opt.Priority)
	c.poll_ns = C.uint64_t(pollEvery(ups).Nanoseconds())
	c.spin_ns = C.uint64_t(spinMargin.Nanoseconds())
	c.max_early_ns = C.uint64_t(maxEarly.Nanoseconds())
	if t.stopFd, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return nil, fmt.Errorf("pfc controller: eventfd: %w", err)
	}
	c.stop_fd = C.int(t.stopFd)
	c.running = 1
	go func() {
		// Never unlocked: the thread's policy and CPU die with it.
		runtime.LockOSThread()
		C.pfc_ctl_run(c)
		close(t.done)
	}()
	return t, nil
}

// stop ends the thread, reads what it did, and frees it.
func (t *thread) stop() threadResult {
	C.pfc_ctl_stop(t.c)
	<-t.done
	c := t.c
	res := threadResult{events: uint64(c.events), logDropped: uint64(c.log_dropped), earlyNs: int64(c.early_ns), realtime: c.realtime != 0}
	if c.err != 0 {
		res.err = fmt.Errorf("pfc controller: a change failed: %w", unix.Errno(-c.err))
	}
	if c.full != 0 {
		res.err = errors.Join(res.err, fmt.Errorf("pfc controller: %d crossings found the queue of due changes full", uint64(c.full)))
	}
	for _, r := range unsafe.Slice(c.log, int(c.log_n)) {
		res.log = append(res.log, ctlRec{crossing: int64(r.crossing), due: int64(r.due), start: int64(r.start), done: int64(r.done), up: int(r.up),
			kind: intswitch.PFCKind(r.kind), hop: int(r.hop), err: int32(r.err)})
	}
	t.free()
	return res
}
