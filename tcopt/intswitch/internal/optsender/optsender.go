// Package optsender is a test-only stand-in for the INT host agent: a
// sock_ops program, attached to one cgroup, that reserves an empty forward
// INT option on every segment its sockets send.
package optsender

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
)

//go:generate go tool bpf2go -cc clang-14 -cflags "-O2 -g -Wall -Werror -mcpu=v3 -I../../../../build/include" -target bpfel optsenderbpf bpf/optsender.bpf.c

// A Sender is the program attached to a cgroup.
type Sender struct {
	objs optsenderbpfObjects
	lnk  link.Link
}

// Attach makes every TCP socket created in the cgroup at cgroupPath carry
// an INT option with the given number of record slots (1..5).
func Attach(cgroupPath string, slots int) (*Sender, error) {
	if slots < 1 || slots > 5 {
		return nil, fmt.Errorf("INT option slots %d: use 1..5", slots)
	}
	spec, err := loadOptsenderbpf()
	if err != nil {
		return nil, fmt.Errorf("load optsender spec: %w", err)
	}
	if err := spec.Variables["slots"].Set(uint8(slots)); err != nil {
		return nil, fmt.Errorf("set slots: %w", err)
	}
	s := &Sender{}
	if err := spec.LoadAndAssign(&s.objs, nil); err != nil {
		return nil, fmt.Errorf("load optsender: %w", err)
	}
	s.lnk, err = link.AttachCgroup(link.CgroupOptions{
		Path: cgroupPath, Attach: ebpf.AttachCGroupSockOps, Program: s.objs.ReserveIntOption,
	})
	if err != nil {
		s.objs.Close()
		return nil, fmt.Errorf("attach optsender to %s: %w", cgroupPath, err)
	}
	return s, nil
}

// Close detaches the program.
func (s *Sender) Close() error {
	err := s.lnk.Close()
	if cerr := s.objs.Close(); err == nil {
		err = cerr
	}
	return err
}
