// Package flows runs TCP flows between hosts in network namespaces from one
// process. Each socket is created inside its host's namespace (nsexec.Do)
// and stays there for life; from then on ordinary goroutines drive it
// through the Go netpoller, so thousands of concurrent flows cost
// goroutines and file descriptors, not threads or processes.
//
// A flow's start is CLOCK_MONOTONIC just before connect(); its end is when
// the receiver has read the flow's last byte (for a long-lived flow: the
// end of the stream, which the sender closes at its stop time).
package flows
