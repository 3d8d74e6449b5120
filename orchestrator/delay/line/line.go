// Package line runs cclab's delay line: one C thread (line.c) that holds
// every packet a sink socket receives for its class's delay and sends it
// back into its port, in order. The sockets and what feeds them are set up
// by package delay; this package only runs the line and reports on it.
package line

/*
#cgo CFLAGS: -O2 -Wall
#cgo LDFLAGS: -lpthread
#include <stdlib.h>
#include "line.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// The limits config.go states are line.h's.
var (
	_ [MaxClasses - C.DL_MAX_CLASSES]struct{}
	_ [C.DL_MAX_CLASSES - MaxClasses]struct{}
	_ [MaxPorts - C.DL_MAX_PORTS]struct{}
	_ [C.DL_MAX_PORTS - MaxPorts]struct{}
)

// A Line is a running delay line.
type Line struct {
	mu    sync.Mutex // Update and Stop
	c     *C.struct_dl_line
	names []string
	final *Stats
}

// cPorts is a C array of port configurations and the source tables they
// point to.
type cPorts struct {
	ports *[MaxPorts]C.struct_dl_port_cfg
	srcs  []unsafe.Pointer
}

func newCPorts(n int) (*cPorts, error) {
	p := (*[MaxPorts]C.struct_dl_port_cfg)(C.calloc(C.size_t(n), C.sizeof_struct_dl_port_cfg))
	if p == nil {
		return nil, errors.New("delay line: out of memory")
	}
	return &cPorts{ports: p}, nil
}

func (cp *cPorts) free() {
	for _, p := range cp.srcs {
		C.free(p)
	}
	C.free(unsafe.Pointer(cp.ports))
}

// set checks port i's classes and sources and writes them into the C
// configuration; errors begin with what (the call) and the port's name.
func (cp *cPorts) set(i int, what, name string, classes []Class, sources map[netip.Addr]int) error {
	if len(classes) == 0 || len(classes) > MaxClasses {
		return fmt.Errorf("%s: port %s: %d classes, want 1 to %d", what, name, len(classes), MaxClasses)
	}
	c := &cp.ports[i]
	c.nclasses = C.uint32_t(len(classes))
	for k, cl := range classes {
		if cl.Delay < 0 {
			return fmt.Errorf("%s: port %s: class %d has a negative delay", what, name, k)
		}
		if cl.Buffer < MinBuffer {
			return fmt.Errorf("%s: port %s: class %d buffer %d B is below %d B (two 64 KB packets)", what, name, k, cl.Buffer, MinBuffer)
		}
		c.delay_ns[k] = C.uint64_t(cl.Delay.Nanoseconds())
		c.buf_bytes[k] = C.uint64_t(cl.Buffer)
	}
	if len(sources) == 0 {
		return nil
	}
	buf := C.calloc(C.size_t(len(sources)), C.sizeof_struct_dl_src)
	if buf == nil {
		return fmt.Errorf("%s: out of memory", what)
	}
	cp.srcs = append(cp.srcs, buf)
	srcs := unsafe.Slice((*C.struct_dl_src)(buf), len(sources))
	j := 0
	for a, k := range sources {
		if !a.Is4() {
			return fmt.Errorf("%s: port %s: source %s is not IPv4", what, name, a)
		}
		if k < 0 || k >= len(classes) {
			return fmt.Errorf("%s: port %s: source %s names class %d of %d", what, name, a, k, len(classes))
		}
		b := a.As4()
		// Network byte order, as the frame holds it.
		srcs[j].addr = C.uint32_t(*(*uint32)(unsafe.Pointer(&b[0])))
		srcs[j].class_idx = C.uint32_t(k)
		j++
	}
	c.nsrcs = C.uint32_t(len(sources))
	c.srcs = (*C.struct_dl_src)(buf)
	return nil
}

// Start checks cfg and starts the line's thread. The sockets stay the
// caller's: close them after Stop.
func Start(cfg Config) (*Line, error) {
	if len(cfg.Ports) == 0 || len(cfg.Ports) > MaxPorts {
		return nil, fmt.Errorf("delay line: %d ports, want 1 to %d", len(cfg.Ports), MaxPorts)
	}
	cp, err := newCPorts(len(cfg.Ports))
	if err != nil {
		return nil, err
	}
	defer cp.free()
	names := make([]string, len(cfg.Ports))
	for i, p := range cfg.Ports {
		names[i] = p.Name
		if err := cp.set(i, "delay line", p.Name, p.Classes, p.Sources); err != nil {
			return nil, err
		}
		cp.ports[i].rx_fd, cp.ports[i].tx_fd = C.int(p.RxFD), C.int(p.TxFD)
	}
	ccfg := (*C.struct_dl_cfg)(C.calloc(1, C.sizeof_struct_dl_cfg))
	if ccfg == nil {
		return nil, errors.New("delay line: out of memory")
	}
	defer C.free(unsafe.Pointer(ccfg))
	ccfg.nports = C.uint32_t(len(cfg.Ports))
	ccfg.ports = &cp.ports[0]
	ccfg.cpu = C.int(cfg.CPU)
	ccfg.rt_prio = C.int(cfg.RTPriority)
	ccfg.margin_ns = C.uint64_t(cfg.Margin.Nanoseconds())
	ccfg.tolerance_ns = C.uint64_t(cfg.Tolerance.Nanoseconds())
	var errbuf [256]C.char
	var l *C.struct_dl_line
	if rc := C.dl_start(ccfg, &l, &errbuf[0], C.int(len(errbuf))); rc != 0 {
		return nil, fmt.Errorf("%s: %w", C.GoString(&errbuf[0]), syscall.Errno(-rc))
	}
	return &Line{c: l, names: names}, nil
}

// updateTimeout bounds how long Update waits for the thread to take an
// update; it takes one between two packets, within microseconds.
const updateTimeout = time.Second

// Update gives the running line new classes and sources: ports[i] for
// the i-th port of Start (same sockets; up to MaxClasses classes). It
// checks everything first and changes nothing on error; it returns once
// the line's thread applies it, and fails with a timeout (changing
// nothing) if the thread did not take it within a second.
//
// Packets held keep their due times: a longer delay applies to packets
// read after the update. A source's packets never leave out of order: a
// packet due before its source's previous one waits for it
// (Stats.Ports[].Classes[].HeldForOrder counts them), so a shorter delay
// (or a class of one) takes over once the packets held under the longer
// one are out. A source left out of Sources gets no delay from then on,
// so its packets may overtake those still held: give it a class of delay
// 0 instead.
func (l *Line) Update(ports []PortUpdate) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.c == nil {
		return errors.New("delay line update: the line has stopped")
	}
	if len(ports) != len(l.names) {
		return fmt.Errorf("delay line update: %d ports, the line has %d", len(ports), len(l.names))
	}
	cp, err := newCPorts(len(ports))
	if err != nil {
		return err
	}
	defer cp.free()
	for i, p := range ports {
		if err := cp.set(i, "delay line update", l.names[i], p.Classes, p.Sources); err != nil {
			return err
		}
	}
	var errbuf [256]C.char
	if rc := C.dl_update(l.c, &cp.ports[0], C.uint32_t(len(ports)), C.int(updateTimeout.Milliseconds()), &errbuf[0], C.int(len(errbuf))); rc != 0 {
		return fmt.Errorf("%s: %w", C.GoString(&errbuf[0]), syscall.Errno(-rc))
	}
	return nil
}

// SetTolerance changes Config.Tolerance of the running line (after an
// update changed its smallest delay).
func (l *Line) SetTolerance(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.c != nil {
		C.dl_set_tolerance(l.c, C.uint64_t(max(d, 0).Nanoseconds()))
	}
}

// Stats reports on the line so far (exact once stopped).
func (l *Line) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.final != nil {
		return *l.final
	}
	return l.read()
}

// Stop stops the thread (packets still held are dropped) and returns the
// final statistics. It is safe to call twice.
func (l *Line) Stop() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.final != nil {
		return *l.final
	}
	C.dl_stop(l.c)
	s := l.read()
	C.dl_free(l.c)
	l.c = nil
	l.final = &s
	return s
}

func (l *Line) read() Stats {
	cs := (*C.struct_dl_stats)(C.malloc(C.sizeof_struct_dl_stats))
	if cs == nil {
		return Stats{}
	}
	defer C.free(unsafe.Pointer(cs))
	C.dl_stats(l.c, cs)
	s := Stats{
		Late:         histogram(cs.hist_late[:]),
		Lag:          histogram(cs.hist_lag[:]),
		MaxLate:      time.Duration(cs.max_late_ns),
		MaxLag:       time.Duration(cs.max_lag_ns),
		UnknownSrc:   uint64(cs.unknown_src),
		BadFrames:    uint64(cs.bad_frames),
		NoStamp:      uint64(cs.no_stamp),
		Wakeups:      uint64(cs.wakeups),
		TimerWakeups: uint64(cs.timer_wakeups),
		Spin:         time.Duration(cs.spin_ns),
		Margin:       time.Duration(cs.margin_ns),
		CPUTime:      time.Duration(cs.cpu_ns),
		Running:      time.Duration(cs.running_ns),
		CPU:          int(cs.cpu),
		RTPriority:   int(cs.rt_prio),
		Updates:      uint64(cs.updates),
	}
	if cs.update_ns > 0 {
		s.LastUpdate = time.Unix(0, int64(cs.update_ns))
	}
	for i := 0; i < int(cs.nports) && i < len(l.names); i++ {
		ps := PortStats{Name: l.names[i], Earlier: classStats(&cs.earlier[i], 0)}
		for k := 0; k < int(cs.nclasses[i]); k++ {
			ps.Classes = append(ps.Classes, classStats(&cs.cls[i][k], time.Duration(cs.delay_ns[i][k])))
		}
		s.Ports = append(s.Ports, ps)
	}
	return s
}

func classStats(c *C.struct_dl_class_stats, delay time.Duration) ClassStats {
	return ClassStats{
		Delay:   delay,
		Packets: uint64(c.pkts), Bytes: uint64(c.bytes), Sent: uint64(c.sent),
		BufferDrops: uint64(c.buf_drops), QueueDrops: uint64(c.qdisc_drops),
		SendErrors: uint64(c.tx_errors), Inversions: uint64(c.inversions),
		MaxBytes: uint64(c.max_bytes), HeldForOrder: uint64(c.held_for_order),
	}
}

func histogram(h []C.uint64_t) Histogram {
	out := Histogram{Counts: make([]uint64, len(h))}
	for i, v := range h {
		out.Counts[i] = uint64(v)
		out.Total += uint64(v)
	}
	return out
}
