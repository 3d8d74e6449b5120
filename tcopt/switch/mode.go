package intswitch

import (
	"errors"
	"fmt"
	"math"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// AttachMode says how the switch's tc programs attach (README.md).
type AttachMode int

const (
	// AttachAuto picks AttachTCX when the kernel has tcx links, else
	// AttachClassic.
	AttachAuto AttachMode = iota
	// AttachTCX: tcx links and the kfunc bpf_cast_to_kern_ctx (Linux >= 6.6).
	AttachTCX
	// AttachClassic: a clsact qdisc and a cls_bpf filter per port peer,
	// no kfunc (older kernels, e.g. 6.1).
	AttachClassic
)

func (m AttachMode) String() string {
	switch m {
	case AttachAuto:
		return "auto"
	case AttachTCX:
		return "tcx"
	case AttachClassic:
		return "classic"
	}
	return fmt.Sprintf("AttachMode(%d)", int(m))
}

// resolveMode turns AttachAuto into the mode this kernel supports.
func resolveMode(m AttachMode) (AttachMode, error) {
	switch m {
	case AttachTCX, AttachClassic:
		return m, nil
	case AttachAuto:
		ok, err := haveTCX()
		if err != nil {
			return 0, err
		}
		if ok {
			return AttachTCX, nil
		}
		return AttachClassic, nil
	}
	return 0, fmt.Errorf("switch config: unknown attach mode %d", int(m))
}

// haveTCX probes for tcx links: creating one on an ifindex no device can
// have fails with ENODEV where tcx exists, and cilium/ebpf reports
// ErrNotSupported where it does not. Nothing is attached either way.
func haveTCX() (bool, error) {
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type:         ebpf.SchedCLS,
		License:      "GPL",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()},
	})
	if err != nil {
		return false, fmt.Errorf("probe tcx: load a tc program: %w", err)
	}
	defer prog.Close()
	l, err := link.AttachTCX(link.TCXOptions{Interface: math.MaxUint32, Program: prog, Attach: ebpf.AttachTCXIngress})
	switch {
	case err == nil:
		l.Close()
		return false, fmt.Errorf("probe tcx: attached to ifindex %d", uint32(math.MaxUint32))
	case errors.Is(err, unix.ENODEV):
		return true, nil
	case errors.Is(err, ebpf.ErrNotSupported):
		return false, nil
	}
	return false, fmt.Errorf("probe tcx: %w", err)
}
