package pfc

import "golang.org/x/sys/unix"

// monoNs is CLOCK_MONOTONIC, the clock of the switch's crossings.
func monoNs() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}
