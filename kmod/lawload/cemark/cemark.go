// Package cemark is a test-only stand-in for an ECN-marking switch: it sets
// CE on a chosen fraction of ECN-capable IPv4 packets leaving an interface,
// so DCTCP's response can be tested before the real switch exists.
package cemark

//go:generate go tool bpf2go -cc clang -cflags "-O2 -g -Wall -Werror" -target bpfel -no-global-types cemark cemark.bpf.c -- -I../../../build/include

import (
	"fmt"
	"math"
	"net"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"cclab/internal/nsexec"
)

// Marker marks packets until Close.
type Marker struct {
	objs cemarkObjects
	l    link.Link
}

// Attach marks fraction (0..1) of the ECN-capable packets leaving dev in
// namespace ns (tcx egress).
func Attach(ns, dev string, fraction float64) (*Marker, error) {
	if fraction < 0 || fraction > 1 {
		return nil, fmt.Errorf("mark fraction %v: want 0..1", fraction)
	}
	spec, err := loadCemark()
	if err != nil {
		return nil, err
	}
	th := uint32(math.Min(fraction*(1<<32), math.MaxUint32))
	if err := spec.Variables["threshold"].Set(th); err != nil {
		return nil, err
	}
	m := &Marker{}
	if err := spec.LoadAndAssign(&m.objs, nil); err != nil {
		return nil, fmt.Errorf("load CE marker: %w", err)
	}
	err = nsexec.Do(ns, func() error {
		ifc, err := net.InterfaceByName(dev)
		if err != nil {
			return err
		}
		m.l, err = link.AttachTCX(link.TCXOptions{Interface: ifc.Index, Program: m.objs.Cemark, Attach: ebpf.AttachTCXEgress})
		return err
	})
	if err != nil {
		m.objs.Close()
		return nil, fmt.Errorf("attach CE marker to %s/%s: %w", ns, dev, err)
	}
	return m, nil
}

// Close detaches the marker.
func (m *Marker) Close() error {
	m.l.Close()
	return m.objs.Close()
}
