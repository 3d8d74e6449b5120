// Package bpfcheck builds the law core as BPF programs (one per law) so
// that a test can load them into the running kernel and compare them step
// by step with the user-space build: the same C must pass the verifier and
// give the same numbers.
package bpfcheck

//go:generate go tool bpf2go -cc clang-14 -cflags "-O2 -g -Wall -Werror -I../../../build/include" -target bpfel -type check_in -type law_out lawCheck src/law_check.bpf.c

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"

	"cclab/kmod/law"
)

// Programs is the law core loaded into the kernel: per law of the table
// its step program <name>_step and its maps <name>_params_map and
// <name>_state_map (src/law_check.bpf.c), found by name.
type Programs struct {
	coll *ebpf.Collection
}

// Load loads every law's BPF build; a verifier rejection is returned with
// the verifier's log.
func Load() (*Programs, error) {
	spec, err := loadLawCheck()
	if err != nil {
		return nil, fmt.Errorf("read law BPF object: %w", err)
	}
	coll, err := ebpf.NewCollection(spec)
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			return nil, fmt.Errorf("load law BPF programs: %+v", ve)
		}
		return nil, fmt.Errorf("load law BPF programs: %w", err)
	}
	return &Programs{coll: coll}, nil
}

// Close unloads the programs and maps.
func (p *Programs) Close() error {
	p.coll.Close()
	return nil
}

// Stepper returns a law.Stepper running params' law in the kernel. Only one
// stepper per Programs may be in use at a time (they share the maps).
func (p *Programs) Stepper(params *law.Params) (law.Stepper, error) {
	name := params.Law().String()
	prog := p.coll.Programs[name+"_step"]
	pmap, smap := p.coll.Maps[name+"_params_map"], p.coll.Maps[name+"_state_map"]
	in, out := p.coll.Maps["check_in_map"], p.coll.Maps["check_out_map"]
	if prog == nil || pmap == nil || smap == nil || in == nil || out == nil {
		return nil, fmt.Errorf("no BPF build of law %s (src/law_check.bpf.c: %s_step and its maps)", name, name)
	}
	raw := params.Raw()
	if int(pmap.ValueSize()) > len(raw) {
		return nil, fmt.Errorf("%s params: BPF struct %d bytes, user space %d", params.Law(), pmap.ValueSize(), len(raw))
	}
	if err := pmap.Update(uint32(0), raw[:pmap.ValueSize()], ebpf.UpdateAny); err != nil {
		return nil, fmt.Errorf("write %s params: %w", params.Law(), err)
	}
	if err := smap.Update(uint32(0), make([]byte, smap.ValueSize()), ebpf.UpdateAny); err != nil {
		return nil, fmt.Errorf("reset %s state: %w", params.Law(), err)
	}
	return &stepper{prog: prog, in: in, out: out}, nil
}

type stepper struct {
	prog    *ebpf.Program
	in, out *ebpf.Map
}

func (s *stepper) run(in *lawCheckCheckIn) (law.Out, error) {
	if err := s.in.Update(uint32(0), in, ebpf.UpdateAny); err != nil {
		return law.Out{}, fmt.Errorf("write step input: %w", err)
	}
	rc, err := s.prog.Run(&ebpf.RunOptions{})
	if err != nil {
		return law.Out{}, fmt.Errorf("run law program: %w", err)
	}
	if rc != 0 {
		return law.Out{}, fmt.Errorf("law program returned %d (map lookup failed)", rc)
	}
	var o lawCheckLawOut
	if err := s.out.Lookup(uint32(0), &o); err != nil {
		return law.Out{}, fmt.Errorf("read step output: %w", err)
	}
	return law.Out{CwndBytes: o.CwndBytes, CwndSegs: o.CwndSegs, PacingRate: o.PacingRate,
		SignalPPM: o.SignalPpm, Trace: law.Trace(o.Trace)}, nil
}

func (s *stepper) Init(sndNxt, mss uint32) (law.Out, error) {
	return s.run(&lawCheckCheckIn{Init: 1, SndNxt: sndNxt, Mss: mss})
}

func (s *stepper) OnAck(a law.Ack) (law.Out, error) {
	in := lawCheckCheckIn{NowNs: a.NowNs, AckedBytes: a.AckedBytes, EceBytes: a.ECEBytes,
		CwndSegs: a.CwndSegs, MssAck: a.MSS, SndNxtAck: a.SndNxt, SndUna: a.SndUna, RttUs: a.RTTus}
	if a.ECE {
		in.Flags = 1 // LAW_ACK_ECE
	}
	if a.UE {
		in.Flags |= 4 // LAW_ACK_UE
	}
	if e := a.Echo; e != nil {
		if len(e.Hops) > len(in.Echo.Hop) {
			return law.Out{}, fmt.Errorf("echo with %d hops", len(e.Hops))
		}
		in.HasEcho = 1
		in.Echo.ArrivedNs, in.Echo.Count, in.Echo.Nhops = e.ArrivedNs, e.Count, uint8(len(e.Hops))
		if e.Overflow {
			in.Echo.Flags = 0x10 // INT_HDR_OVERFLOW
		}
		for i, h := range e.Hops {
			in.Echo.Hop[i].Qlen, in.Echo.Hop[i].TxBytes = h.Qlen, h.TxBytes
			in.Echo.Hop[i].Ts, in.Echo.Hop[i].RateMbps = h.Ts, h.RateMbps
		}
		in.Echo.QcnCount, in.Echo.QcnKey, in.Echo.QcnFb = e.QCNCount, e.QCNKey, e.QCNFb
	}
	return s.run(&in)
}
