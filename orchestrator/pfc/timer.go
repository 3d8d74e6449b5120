package pfc

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// The controller's thread sleeps until the next change is due, or until
// the reader files an earlier one: ppoll on an eventfd with the time
// left as its timeout. ppoll's timeout is an hrtimer like
// clock_nanosleep's (poll_schedule_timeout), so it is as precise, and,
// unlike a nanosleep, the reader can cut it short.

// spinMargin is how long before a due time the thread stops sleeping and
// spins on the clock: the wakeup's own lateness (tens of microseconds
// under load) then falls before the due time. Short, so that the spin
// costs at most this much CPU per change on a 2-core machine whose delay
// line spins already.
const spinMargin = 30_000 // ns

// A waker is the eventfd the reader writes when it files a change.
type waker struct{ fd int }

func newWaker() (*waker, error) {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("pfc controller: eventfd: %w", err)
	}
	return &waker{fd: fd}, nil
}

// wake makes a waiting wait return.
func (w *waker) wake() {
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], 1)
	_, _ = unix.Write(w.fd, b[:]) // EAGAIN: the counter is set already
}

// wait sleeps until CLOCK_MONOTONIC deadline (ns; 0: no deadline) or a
// wake, whichever comes first.
func (w *waker) wait(deadline int64) error {
	fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}}
	for {
		var ts *unix.Timespec
		if deadline > 0 {
			left := deadline - monoNs()
			if left <= 0 {
				return nil
			}
			t := unix.NsecToTimespec(left)
			ts = &t
		}
		n, err := unix.Ppoll(fds, ts, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("pfc controller: ppoll: %w", err)
		}
		if n > 0 {
			var b [8]byte
			_, _ = unix.Read(w.fd, b[:])
		}
		return nil
	}
}

func (w *waker) close() { unix.Close(w.fd) }

// spinUntil spins on the clock until deadline.
func spinUntil(deadline int64) {
	for monoNs() < deadline {
	}
}

// preciseThread makes the calling (locked) thread wake on time: a timer
// slack of 1 ns instead of the default 50 us, and SCHED_FIFO when it is
// allowed (it is not in every container; the thread then keeps the
// normal policy and the report's lateness shows it).
func preciseThread(opt Options) (realtime bool) {
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	if opt.CPU >= 0 {
		var set unix.CPUSet
		set.Set(opt.CPU)
		_ = unix.SchedSetaffinity(0, &set) // a CPU it may not use: left where it is
	}
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: uint32(opt.Priority)}
	return unix.SchedSetAttr(0, &attr, 0) == nil
}

// monoNs is CLOCK_MONOTONIC, the clock of the switch's events.
func monoNs() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}
