package flows

import "golang.org/x/sys/unix"

// Monotonic is CLOCK_MONOTONIC in nanoseconds, the clock of flows.csv.
func Monotonic() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) // cannot fail for this clock
	return ts.Nano()
}

// Realtime is CLOCK_REALTIME in nanoseconds (the pcap clock).
func Realtime() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_REALTIME, &ts)
	return ts.Nano()
}
