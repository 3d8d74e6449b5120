package interrupt

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Watch returns a context cancelled, with a *Signal as its cause, by the
// first signal that ends the command; stop releases the signals. Signals
// after the first are swallowed while the command tears down: a second
// Ctrl-C must not leave half a teardown behind.
//
// A SIGHUP that the command was started with ignored (nohup) stays
// ignored: the run outlives the terminal, and its parent, as nohup asks.
//
// A SIGPIPE ends the command only when standard output or error is the
// broken pipe. With SIGPIPE handled, Go delivers every EPIPE's signal
// here, including a workload's socket write to a peer that closed, which
// is no reason to stop. Writes to the broken stream fail with EPIPE
// instead of killing the process, and their errors are ignored, so the
// teardown runs to its end.
//
// startParent is the parent's pid when cclab started (DieWithParent): a
// SIGHUP after the parent changed is the parent's death.
func Watch(parent context.Context, startParent int) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGPIPE}
	if !sigHUPIgnored() {
		sigs = append(sigs, syscall.SIGHUP)
	}
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, sigs...)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case s := <-ch:
				sig := s.(syscall.Signal)
				if sig == syscall.SIGPIPE && !broken(1, 2) {
					continue
				}
				if ctx.Err() == nil {
					cancel(&Signal{Signo: sig, At: time.Now(), ParentExited: sig == syscall.SIGHUP && os.Getppid() != startParent})
				}
			}
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(context.Canceled)
	}
}

// broken reports whether any of the file descriptors (standard output
// and error) can no longer be written: a pipe whose reader is gone polls
// as an error, a hung-up terminal or socket as a hangup.
func broken(fd ...int) bool {
	fds := make([]unix.PollFd, len(fd))
	for i, f := range fd {
		fds[i] = unix.PollFd{Fd: int32(f), Events: unix.POLLOUT}
	}
	if _, err := unix.Poll(fds, 0); err != nil {
		return false
	}
	for _, f := range fds {
		if f.Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			return true
		}
	}
	return false
}

// sigHUPIgnored: the command was started under nohup.
func sigHUPIgnored() bool { return signal.Ignored(syscall.SIGHUP) }
