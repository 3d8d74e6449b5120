// Package watch samples a running fabric at an interval: every TCP
// socket's window, RTT, pacing and delivery rate in the hosts
// (orchestrator/tcpsample) and every switch port's queue and utilisation
// (PortSampler), as one Sample per interval: `cclab watch` prints them, a
// run with `watch:` records them to watch.jsonl.
package watch
