package flows

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// RaiseFileLimit makes sure the process may hold at least n open files
// (two per flow plus listeners and captures), raising the hard limit too
// when it is lower (root may).
func RaiseFileLimit(n int) error {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("get RLIMIT_NOFILE: %w", err)
	}
	want := uint64(n)
	if lim.Cur >= want {
		return nil
	}
	if lim.Max < want {
		lim.Max = want
	}
	lim.Cur = lim.Max
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("raise RLIMIT_NOFILE to %d (for %d flows): %w", want, n/2, err)
	}
	return nil
}
