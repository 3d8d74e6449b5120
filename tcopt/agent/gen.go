// Package agent loads the cclab INT host agent (tcopt/bpf/agent.bpf.c, a
// sock_ops program) into a run's cgroup: every TCP socket created by a
// process in that cgroup carries the INT option, and the sender's socket
// storage cclab_int_echo receives the echoes the laws read.
//
// Which sockets: a socket belongs to the cgroup of the process that created
// it (accepted sockets to their listener's), for life. A run gets its own
// cgroup v2 directory <cgroup2 mount>/cclab-<id> with the program attached
// there through a bpf link pinned under /sys/fs/bpf/cclab-<id>/; the run
// moves the processes that open its flows into it (Agent.AddProcess) before
// they open sockets. Nothing outside the cgroup is touched.
package agent

//go:generate go tool bpf2go -cc clang -cflags "-O2 -g -Wall -Werror -I../../build/include" -target bpfel sockops ../bpf/agent.bpf.c
