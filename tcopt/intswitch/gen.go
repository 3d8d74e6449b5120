package intswitch

// The switch's BPF objects and their Go bindings are generated from
// tcopt/bpf/switch.bpf.c, twice: switchbpf_bpfel.go/.o attach with tcx
// (Linux >= 6.6), switchclassicbpf_bpfel.go/.o with classic cls_bpf filters
// (SWITCH_CLASSIC, e.g. Linux 6.1), by `make generate` (with
// build/include/vmlinux.h).
//go:generate go tool bpf2go -cc clang-14 -cflags "-O2 -g -Wall -Werror -mcpu=v3 -I../../build/include" -type port_key -type port_cfg -type port_state -type switch_global -type pfc_cfg -type pfc_state -type pfc_switch -type pfc_iface -target bpfel switchbpf ../bpf/switch.bpf.c
//go:generate go tool bpf2go -cc clang-14 -cflags "-O2 -g -Wall -Werror -mcpu=v3 -I../../build/include -DSWITCH_CLASSIC" -target bpfel switchclassicbpf ../bpf/switch.bpf.c
