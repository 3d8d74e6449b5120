package topology

import (
	"time"

	"cclab/internal/units"
)

// What this machine can emulate (2 cores, veth pairs shaped by HTB into
// byte FIFOs, the delay line on one core). A file beyond these is refused
// with the limit and its reason: a run of it would not be what the file
// says, and nothing would say so.
const (
	// MaxRate is the fastest link rate. A veth moves 9-14 Gbit/s here at
	// best, one flow in 64 KB TSO skbs and nothing else running
	// (docs/performance.md, host agent); the machine forwards about
	// 1 Gbit/s in total per-packet (docs/scaling.md). A link above 20
	// Gbit/s would run at whatever the CPU gives, never at its rate.
	MaxRate units.Rate = 20e9
	// MaxBuffer is the largest port buffer (buffer, host_buffer), 1 GB. The
	// bfifo's limit is a 32-bit byte count (4 GiB; above it the kernel
	// gets the value modulo 2^32), and a full queue is kernel memory: a
	// 4-pod fat-tree has 96 ports on a 23 GiB machine.
	MaxBuffer units.Size = 1e9
	// MaxLineMemory bounds what the delay line allocates for all of a
	// topology's delayed ports together: each class's FIFO is allocated
	// at start, twice what the switch's other links bring in during the
	// class's delay plus 1 MiB (DelayPorts). 8 GB, a third of this
	// machine's 23 GiB, leaves the rest to the namespaces, the queues and the
	// captures.
	MaxLineMemory int64 = 8e9
)

// MaxDelayedHosts is how many hosts a topology with delays may have: each
// host's switch port is a port of the delay line, which serves at most
// 1024 (orchestrator/delay/line.MaxPorts).
const MaxDelayedHosts = 1024

// MaxRTT bounds every path's propagation RTT (twice its one-way delay):
// Linux's initial retransmission timeout (TCP_TIMEOUT_INIT, RFC 6298's
// 1 s). A path as long would have every connection retransmit its SYN.
const MaxRTT = time.Second

// MinRate is the slowest link rate: below it a single 1500 B frame takes
// more than 12 ms to serialise.
const MinRate units.Rate = 1e6
