// Package tcpsample reads, in one go, the state of every TCP connection in
// a set of network namespaces: addresses, state, congestion control, cwnd,
// RTTs, pacing and delivery rates and byte counters, as the kernel holds
// them. It is the sampler behind a live view of a run's flows.
//
// It asks the kernel over sock_diag (NETLINK_SOCK_DIAG, one inet_diag dump
// per namespace covering IPv4 and IPv6) for INET_DIAG_INFO (struct
// tcp_info) and INET_DIAG_CONG (the congestion control's name), sockets in
// the states that move data filtered in the kernel. netlink's
// SocketDiagTCPInfo does not request INET_DIAG_CONG, filters no states and
// keeps no socket per namespace, so the request and its parsing are here.
//
// A Sampler keeps one netlink socket per namespace open between samples: a
// socket stays in the namespace it was made in, so a sample costs only the
// dumps and no namespace switch. The socket also keeps its namespace alive
// after `ip netns delete`; each sample therefore checks that the name still
// leads to the same namespace and fails, naming it, when it does not. Close
// the Sampler to let go of the namespaces.
//
// Cost: each dump walks every bucket of the TCP established hash table its
// namespace uses, whatever the number of sockets. Namespaces share the
// kernel's table (262 144 buckets on a 24 GB machine: about 1 ms per
// namespace) unless they were made from a namespace whose
// net.ipv4.tcp_child_ehash_entries gives them their own (1024 buckets:
// about 20 us). docs/performance.md has the figures.
package tcpsample
