// Package health measures whether the emulation can be trusted: the RTT
// noise floor between two hosts before the run (a TCP ping-pong), CPU
// saturation during the run (/proc/stat), and the rate each loaded link
// actually achieved against its configured rate (interface counters read
// inside each namespace).
package health
