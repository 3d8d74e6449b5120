package intswitch

import (
	"fmt"

	"cclab/internal/tcx"
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

// haveTCX probes for tcx links (internal/tcx).
func haveTCX() (bool, error) { return tcx.Supported() }
