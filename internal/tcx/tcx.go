// Package tcx tells whether the kernel has tcx links (Linux >= 6.6), the
// way cclab's tc programs attach where it can; older kernels (Debian's
// 6.1) get classic cls_bpf filters on a clsact qdisc instead.
package tcx

import (
	"errors"
	"fmt"
	"math"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// Supported probes for tcx links: creating one on an ifindex no device can
// have fails with ENODEV where tcx exists, and cilium/ebpf reports
// ErrNotSupported where it does not. Nothing is attached either way.
func Supported() (bool, error) {
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
