// Package delay gives every path of a built network its configured
// propagation delay, on kernels with sch_netem and without it: tc
// programs at each host-facing switch port steer a packet, before the
// port's queue, into a hold for its whole path's one-way delay (netem, or
// cclab's own delay line, package line), which puts it back in order. The
// queues stay queues: bytes on the wire are never in them. README.md is
// the design and its measured accuracy.
package delay
