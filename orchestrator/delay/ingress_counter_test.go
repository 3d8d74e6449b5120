package delay_test

import (
	"fmt"
	"net"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
)

// ifindexes maps the calling namespace's interfaces to their indexes.
func ifindexes() (map[string]int, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	m := map[string]int{}
	for _, i := range ifs {
		m[i.Name] = i.Index
	}
	return m, nil
}

// countIngress attaches, at the tail of egress of ifindex (in the calling
// namespace), a tc program counting packets per skb->ingress_ifindex (the
// kernel's skb_iif) in the returned hash map.
func countIngress(t *testing.T, ifindex int) (*ebpf.Map, error) {
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 64})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { m.Close() })
	const ingressIfindex = 36 // offsetof(struct __sk_buff, ingress_ifindex)
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type: ebpf.SchedCLS, License: "GPL",
		Instructions: asm.Instructions{
			asm.LoadMem(asm.R2, asm.R1, ingressIfindex, asm.Word),
			asm.StoreMem(asm.RFP, -4, asm.R2, asm.Word),
			asm.Mov.Imm(asm.R3, 1),
			asm.StoreMem(asm.RFP, -16, asm.R3, asm.DWord),
			asm.LoadMapPtr(asm.R1, m.FD()),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, -4),
			asm.Mov.Reg(asm.R3, asm.RFP),
			asm.Add.Imm(asm.R3, -16),
			asm.Mov.Imm(asm.R4, 1), // BPF_NOEXIST
			asm.FnMapUpdateElem.Call(),
			asm.JEq.Imm(asm.R0, 0, "out"),
			// It existed: add one.
			asm.LoadMapPtr(asm.R1, m.FD()),
			asm.Mov.Reg(asm.R2, asm.RFP),
			asm.Add.Imm(asm.R2, -4),
			asm.FnMapLookupElem.Call(),
			asm.JEq.Imm(asm.R0, 0, "out"),
			asm.Mov.Imm(asm.R1, 1),
			asm.StoreXAdd(asm.R0, asm.R1, asm.DWord),
			asm.Mov.Imm(asm.R0, -1).WithSymbol("out"), // TCX_NEXT
			asm.Return(),
		},
	})
	if err != nil {
		return nil, fmt.Errorf("counter program: %w", err)
	}
	defer prog.Close()
	l, err := link.AttachTCX(link.TCXOptions{Interface: ifindex, Program: prog, Attach: ebpf.AttachTCXEgress, Anchor: link.Tail()})
	if err != nil {
		return nil, fmt.Errorf("attach counter: %w", err)
	}
	t.Cleanup(func() { l.Close() })
	return m, nil
}
