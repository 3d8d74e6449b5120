// Package bpf holds the eBPF struct_ops builds of the congestion-control
// laws: one object per law, compiled by bpf2go from <law>.bpf.c around the
// law core in kmod/law/. kmod/lawload loads and registers them.
package bpf

//go:generate go tool bpf2go -cc clang -cflags "-O2 -g -Wall -Werror -mcpu=v3" -target bpfel -no-global-types dctcp dctcp.bpf.c -- -I../../build/include -I../law -I../../tcopt
//go:generate go tool bpf2go -cc clang -cflags "-O2 -g -Wall -Werror -mcpu=v3" -target bpfel -no-global-types timely timely.bpf.c -- -I../../build/include -I../law -I../../tcopt
//go:generate go tool bpf2go -cc clang -cflags "-O2 -g -Wall -Werror -mcpu=v3" -target bpfel -no-global-types dcqcn dcqcn.bpf.c -- -I../../build/include -I../law -I../../tcopt
//go:generate go tool bpf2go -cc clang -cflags "-O2 -g -Wall -Werror -mcpu=v3" -target bpfel -no-global-types qcn qcn.bpf.c -- -I../../build/include -I../law -I../../tcopt
//go:generate go tool bpf2go -cc clang -cflags "-O2 -g -Wall -Werror -mcpu=v3" -target bpfel -no-global-types qcn_t qcn_t.bpf.c -- -I../../build/include -I../law -I../../tcopt
//go:generate go tool bpf2go -cc clang -cflags "-O2 -g -Wall -Werror -mcpu=v3" -target bpfel -no-global-types swift swift.bpf.c -- -I../../build/include -I../law -I../../tcopt
//go:generate go tool bpf2go -cc clang -cflags "-O2 -g -Wall -Werror -mcpu=v3" -target bpfel -no-global-types hpcc hpcc.bpf.c -- -I../../build/include -I../law -I../../tcopt
//go:generate go tool bpf2go -cc clang -cflags "-O2 -g -Wall -Werror -mcpu=v3" -target bpfel -no-global-types powertcp powertcp.bpf.c -- -I../../build/include -I../law -I../../tcopt
//go:generate go tool bpf2go -cc clang -cflags "-O2 -g -Wall -Werror -mcpu=v3" -target bpfel -no-global-types theta_powertcp theta_powertcp.bpf.c -- -I../../build/include -I../law -I../../tcopt
