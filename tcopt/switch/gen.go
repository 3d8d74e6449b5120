package intswitch

// The switch's BPF object and its Go bindings (switchbpf_bpfel.go/.o) are
// generated from tcopt/bpf/switch.bpf.c; build/include/vmlinux.h comes from
// `make build`.
//go:generate go tool bpf2go -cc clang-14 -cflags "-O2 -g -Wall -Werror -mcpu=v3 -I../../build/include" -type port_key -type port_cfg -type port_state -target bpfel switchbpf ../bpf/switch.bpf.c
