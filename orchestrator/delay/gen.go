package delay

// The delay's tc programs and their Go bindings are generated from
// bpf/delay.bpf.c by `make generate` (with build/include/vmlinux.h).
//go:generate go tool bpf2go -cc clang-14 -cflags "-O2 -g -Wall -Werror -I../../build/include" -target bpfel delaybpf bpf/delay.bpf.c
