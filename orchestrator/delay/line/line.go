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
	c     *C.struct_dl_line
	names []string
	final *Stats
}

// Start checks cfg and starts the line's thread. The sockets stay the
// caller's: close them after Stop.
func Start(cfg Config) (*Line, error) {
	if len(cfg.Ports) == 0 || len(cfg.Ports) > MaxPorts {
		return nil, fmt.Errorf("delay line: %d ports, want 1 to %d", len(cfg.Ports), MaxPorts)
	}
	ports := (*[MaxPorts]C.struct_dl_port_cfg)(C.calloc(C.size_t(len(cfg.Ports)), C.sizeof_struct_dl_port_cfg))
	if ports == nil {
		return nil, errors.New("delay line: out of memory")
	}
	defer C.free(unsafe.Pointer(ports))
	var srcBufs []unsafe.Pointer
	defer func() {
		for _, p := range srcBufs {
			C.free(p)
		}
	}()
	names := make([]string, len(cfg.Ports))
	for i, p := range cfg.Ports {
		names[i] = p.Name
		if len(p.Classes) == 0 || len(p.Classes) > MaxClasses {
			return nil, fmt.Errorf("delay line port %s: %d classes, want 1 to %d", p.Name, len(p.Classes), MaxClasses)
		}
		c := &ports[i]
		c.rx_fd, c.tx_fd = C.int(p.RxFD), C.int(p.TxFD)
		c.nclasses = C.uint32_t(len(p.Classes))
		for k, cl := range p.Classes {
			if cl.Delay < 0 {
				return nil, fmt.Errorf("delay line port %s: class %d has a negative delay", p.Name, k)
			}
			if cl.Buffer < MinBuffer {
				return nil, fmt.Errorf("delay line port %s: class %d buffer %d B is below %d B (two 64 KB packets)", p.Name, k, cl.Buffer, MinBuffer)
			}
			c.delay_ns[k] = C.uint64_t(cl.Delay.Nanoseconds())
			c.buf_bytes[k] = C.uint64_t(cl.Buffer)
		}
		if len(p.Sources) > 0 {
			buf := C.calloc(C.size_t(len(p.Sources)), C.sizeof_struct_dl_src)
			if buf == nil {
				return nil, errors.New("delay line: out of memory")
			}
			srcBufs = append(srcBufs, buf)
			srcs := unsafe.Slice((*C.struct_dl_src)(buf), len(p.Sources))
			j := 0
			for a, k := range p.Sources {
				if !a.Is4() {
					return nil, fmt.Errorf("delay line port %s: source %s is not IPv4", p.Name, a)
				}
				if k < 0 || k >= len(p.Classes) {
					return nil, fmt.Errorf("delay line port %s: source %s names class %d of %d", p.Name, a, k, len(p.Classes))
				}
				b := a.As4()
				// Network byte order, as the frame holds it.
				srcs[j].addr = C.uint32_t(*(*uint32)(unsafe.Pointer(&b[0])))
				srcs[j].class_idx = C.uint32_t(k)
				j++
			}
			c.nsrcs = C.uint32_t(len(p.Sources))
			c.srcs = (*C.struct_dl_src)(buf)
		}
	}
	ccfg := (*C.struct_dl_cfg)(C.calloc(1, C.sizeof_struct_dl_cfg))
	if ccfg == nil {
		return nil, errors.New("delay line: out of memory")
	}
	defer C.free(unsafe.Pointer(ccfg))
	ccfg.nports = C.uint32_t(len(cfg.Ports))
	ccfg.ports = &ports[0]
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

// Stats reports on the line so far (exact once stopped).
func (l *Line) Stats() Stats {
	if l.final != nil {
		return *l.final
	}
	return l.read()
}

// Stop stops the thread (packets still held are dropped) and returns the
// final statistics. It is safe to call twice.
func (l *Line) Stop() Stats {
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
	}
	for i := 0; i < int(cs.nports) && i < len(l.names); i++ {
		ps := PortStats{Name: l.names[i]}
		for k := 0; k < int(cs.nclasses[i]); k++ {
			c := cs.cls[i][k]
			ps.Classes = append(ps.Classes, ClassStats{
				Packets: uint64(c.pkts), Bytes: uint64(c.bytes), Sent: uint64(c.sent),
				BufferDrops: uint64(c.buf_drops), QueueDrops: uint64(c.qdisc_drops),
				SendErrors: uint64(c.tx_errors), Inversions: uint64(c.inversions),
				MaxBytes: uint64(c.max_bytes),
			})
		}
		s.Ports = append(s.Ports, ps)
	}
	return s
}

func histogram(h []C.uint64_t) Histogram {
	out := Histogram{Counts: make([]uint64, len(h))}
	for i, v := range h {
		out.Counts[i] = uint64(v)
		out.Total += uint64(v)
	}
	return out
}
