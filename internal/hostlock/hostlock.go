// Package hostlock lets one cclab run at a time use a kernel: a run
// changes machine-wide state (the laws registered, rcu_expedited, the
// delay line's CPUs, /proc/stat verdicts), so two runs on one host, as two
// Slurm "nodes" on one machine or two tasks of a sweep, must take turns.
// The lock is an exclusive flock on a file, which the kernel releases when
// its holder dies, however it dies.
package hostlock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultPath is the lock of this host's kernel.
const DefaultPath = "/run/cclab/host.lock"

// ErrBusy is returned when another process holds the lock and the caller
// did not ask to wait.
var ErrBusy = errors.New("another cclab run holds this host")

// pollEvery is how often a waiting Acquire tries again.
const pollEvery = 200 * time.Millisecond

// Lock is a held host lock.
type Lock struct{ f *os.File }

// Acquire takes the lock at path. Without wait it fails at once with an
// error wrapping ErrBusy (naming the holder's pid) when another holds it;
// with wait it tries until ctx ends.
func Acquire(ctx context.Context, path string, wait bool) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("host lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("host lock %s: %w", path, err)
	}
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("host lock %s: %w", path, err)
		}
		if !wait {
			holder := readHolder(f)
			f.Close()
			return nil, fmt.Errorf("host lock %s (held by pid %s): %w", path, holder, ErrBusy)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("host lock %s: %w", path, ctx.Err())
		case <-time.After(pollEvery):
		}
	}
	// The holder's pid, for the message another process prints.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

func readHolder(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	if s := strings.TrimSpace(string(b[:n])); s != "" {
		return s
	}
	return "unknown"
}

// Release gives the lock up.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the last descriptor drops the flock
	l.f = nil
	return err
}
