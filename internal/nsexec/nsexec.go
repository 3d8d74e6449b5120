// Package nsexec runs code inside a named network namespace from a
// multi-threaded Go program.
//
// A network namespace belongs to an OS thread, not a goroutine, so Do locks
// the goroutine to its thread, switches the thread, runs fn and switches
// back. Sockets created inside fn stay in that namespace for life and can be
// used afterwards from any goroutine; that is how one cclab process runs
// flows and captures in many hosts at once.
package nsexec

import (
	"fmt"
	"runtime"

	"github.com/vishvananda/netns"
)

// Do runs fn with the calling thread in the namespace named name (as listed
// by `ip netns`, i.e. /run/netns/NAME).
func Do(name string, fn func() error) error {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("get current netns: %w", err)
	}
	defer orig.Close()
	target, err := netns.GetFromName(name)
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("open netns %s: %w", name, err)
	}
	defer target.Close()
	if err := netns.Set(target); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("enter netns %s: %w", name, err)
	}
	fnErr := fn()
	if err := netns.Set(orig); err != nil {
		// The thread is stuck in the wrong namespace: leave it locked so
		// the runtime discards it when this goroutine ends.
		return fmt.Errorf("return from netns %s: %w", name, err)
	}
	runtime.UnlockOSThread()
	return fnErr
}
