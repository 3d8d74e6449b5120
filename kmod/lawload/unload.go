package lawload

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/cilium/ebpf"

	"cclab/internal/bpfpin"
)

// Maps pinned by name in the pin directory and shared by the laws (and,
// for the echo map, by the INT host agent).
var sharedMaps = []string{"cclab_int_echo", "cclab_cc_trace", "cclab_cc_ctl", PathTable}

// Unload unregisters the named laws or registered names (all that cclab
// registered in the pin directory when none is named). A law that is not registered there is an
// error, and registrations made by anyone else are never touched.
func Unload(laws []string, opts Options) ([]Registration, error) {
	todo, err := ToUnload(laws, opts)
	if err != nil {
		return nil, err
	}
	return todo, unregister(todo, opts.pinDir())
}

// ToUnload is what Unload would unregister: the registrations of the
// named laws or registered names (all when none is named).
func ToUnload(laws []string, opts Options) ([]Registration, error) {
	regs, err := List(opts)
	if err != nil {
		return nil, err
	}
	var todo []Registration
	for _, law := range laws {
		// A registered name first (a law may be registered under its own
		// name and under others), then a law's name.
		i := slices.IndexFunc(regs, func(r Registration) bool { return r.Name == law })
		if i < 0 {
			i = slices.IndexFunc(regs, func(r Registration) bool { return r.Law == law })
		}
		if i < 0 {
			return nil, fmt.Errorf("%s is not registered by cclab in %s", law, opts.pinDir())
		}
		todo = append(todo, regs[i])
	}
	if len(laws) == 0 {
		todo = regs
	}
	return todo, nil
}

// unregister removes registrations' pins (dropping the last reference to
// the struct_ops link unregisters the law), then the shared maps once no
// law remains and no program uses them.
func unregister(regs []Registration, pinDir string) error {
	var errs []error
	for _, r := range regs {
		errs = append(errs, removeRegDir(r.Pin))
	}
	errs = append(errs, waitUnregistered(regs))
	left, err := List(Options{PinDir: pinDir})
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	if len(left) == 0 {
		// The kernel frees an unregistered struct_ops and its programs
		// after RCU grace periods (seconds on a loaded machine): wait for
		// our programs to go before deciding the shared maps are unused.
		// Other programs (the INT agent's) keep theirs without a wait.
		for try := 0; ; try++ {
			busy, err := removeUnusedShared(pinDir)
			if err != nil || !busy || try == 100 {
				errs = append(errs, err)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return errors.Join(errs...)
}

// waitUnregistered returns once the kernel has dropped the registrations'
// names from tcp_available_congestion_control. Dropping the link's last
// reference unregisters the law from a kernel work item, some
// milliseconds later on a loaded machine: registering the same name again
// (Reconcile) before then fails with "already registered".
func waitUnregistered(regs []Registration) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		names, err := Available()
		if err != nil {
			return err
		}
		var left []string
		for _, r := range regs {
			if slices.Contains(names, r.Name) {
				left = append(left, r.Name)
			}
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%v still registered 10 s after their links were unpinned", left)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func removeRegDir(dir string) error {
	var errs []error
	for _, f := range []string{"link", "rodata", buildPin} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !os.IsNotExist(err) {
			errs = append(errs, fmt.Errorf("unpin: %w", err))
		}
	}
	if err := os.Remove(dir); err != nil && !os.IsNotExist(err) {
		errs = append(errs, fmt.Errorf("remove %s: %w", dir, err))
	}
	return errors.Join(errs...)
}

// removeUnusedShared unpins the shared maps that no loaded program uses
// and reports whether some are still used by struct_ops programs (ours,
// on their way out). The INT host agent may still hold the echo map: then
// it stays, so the next load shares it again, and the agent unpins it when
// it closes (bpfpin). The pin directory goes too if empty.
func removeUnusedShared(pinDir string) (busy bool, err error) {
	used, err := bpfpin.Users()
	if err != nil {
		return false, err
	}
	var errs []error
	for _, name := range sharedMaps {
		users, err := bpfpin.UnpinUnused(filepath.Join(pinDir, name), used)
		errs = append(errs, err)
		busy = busy || users[ebpf.StructOps]
	}
	// Fails harmlessly while anything else is pinned there.
	_ = os.Remove(pinDir)
	return busy, errors.Join(errs...)
}
