package interrupt

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Signal is why a context was cancelled: a signal that ends the command.
type Signal struct {
	Signo syscall.Signal
	At    time.Time
	// ParentExited: the SIGHUP was the parent-death signal (the process
	// that started cclab is gone), not a terminal hangup.
	ParentExited bool
}

// Name is the signal's name, "SIGHUP".
func (s *Signal) Name() string { return unix.SignalName(s.Signo) }

func (s *Signal) Error() string {
	why := ""
	switch {
	case s.ParentExited:
		why = " (the parent process exited)"
	case s.Signo == syscall.SIGPIPE:
		why = " (standard output or error was closed)"
	}
	return fmt.Sprintf("interrupted by %s%s", s.Name(), why)
}

// ExitCode is the shell's code for a command ended by the signal: 128 + n.
func (s *Signal) ExitCode() int { return 128 + int(s.Signo) }

// Cause is the signal that cancelled ctx, or nil when it was not
// cancelled by one.
func Cause(ctx context.Context) *Signal {
	var s *Signal
	if errors.As(context.Cause(ctx), &s) {
		return s
	}
	return nil
}
