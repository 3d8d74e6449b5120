// Package rcuexpedite makes the kernel's RCU grace periods expedited while
// cclab runs, and puts the setting back when the last run holding it ends.
//
// Why: building a fabric, attaching its tc programs and tearing it down
// are hundreds of operations that each wait for a grace period under the
// rtnl lock (a tcx attach or detach commits its program list and calls
// synchronize_rcu; so do namespace and veth changes). A normal grace
// period takes 10-20 ms here, so a k=4 fat-tree spent about 1.4 s
// attaching its 96 INT hooks and as long detaching them, one at a time
// whatever the parallelism. Expedited, each takes microseconds
// (/sys/kernel/rcu_expedited; docs/performance.md). The knob only changes
// how synchronize_rcu() waits; nothing a workload does on its packets'
// path waits for a grace period.
//
// The knob is global, so holders are counted: each holder keeps a marker
// file named by its run id under an exclusive flock, which the kernel
// drops when the process dies (even by kill -9). The first holder
// saves the knob's value; Release and Settle restore it once no marker is
// locked any more. The count lives in the state root (/run/cclab): removing
// it by hand while a run holds the knob loses the saved value.
package rcuexpedite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"cclab/internal/runid"
)

// A Knob is the setting and where its holders are recorded.
type Knob struct {
	Path      string // the sysfs file
	StateRoot string // one directory per run (runid.StateRoot)
}

// System is the kernel's knob with cclab's run state.
var System = Knob{Path: "/sys/kernel/rcu_expedited", StateRoot: runid.StateRoot}

// HoldersDir, under the state root, holds one marker per hold, named by
// the holder's run id and a unique suffix (a run's own state directory
// goes with its network, and a hold outlives that between variants).
const HoldersDir = "rcu_expedited.holders"

func (k Knob) original() string { return filepath.Join(k.StateRoot, "rcu_expedited.original") }
func (k Knob) holders() string  { return filepath.Join(k.StateRoot, HoldersDir) }
func (k Knob) lockPath() string { return filepath.Join(k.StateRoot, "rcu_expedited.lock") }

// A Hold keeps the knob at 1 until Release.
type Hold struct {
	k      Knob
	marker *os.File
}

// Hold sets the knob to 1 for run id until Release (or until this process
// dies and Settle runs). Holds nest: a run may hold it for its whole
// length and again for each network it builds.
func (k Knob) Hold(id runid.ID) (*Hold, error) {
	unlock, err := k.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := os.MkdirAll(k.holders(), 0o755); err != nil {
		return nil, fmt.Errorf("rcu_expedited: %w", err)
	}
	// The marker first: a crash after the knob is written must leave a
	// record for Settle.
	f, err := os.CreateTemp(k.holders(), string(id)+"-*")
	if err != nil {
		return nil, fmt.Errorf("rcu_expedited: marker: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		os.Remove(f.Name())
		f.Close()
		return nil, fmt.Errorf("rcu_expedited: lock the marker: %w", err)
	}
	h := &Hold{k: k, marker: f}
	saved := false
	if _, err := os.Stat(k.original()); errors.Is(err, os.ErrNotExist) {
		v, err := os.ReadFile(k.Path)
		if err != nil {
			h.drop()
			return nil, fmt.Errorf("rcu_expedited: %w", err)
		}
		if err := writeAtomic(k.original(), v); err != nil {
			h.drop()
			return nil, fmt.Errorf("rcu_expedited: save the original value: %w", err)
		}
		saved = true
	}
	if err := os.WriteFile(k.Path, []byte("1\n"), 0o644); err != nil {
		h.drop()
		if saved {
			// Nothing was changed: forget the value rather than
			// restore it through a knob that cannot be written.
			os.Remove(k.original())
		}
		return nil, fmt.Errorf("rcu_expedited: %w", err)
	}
	return h, nil
}

// writeAtomic writes b to path by renaming a complete file over it: a
// crash leaves the old file or the new one, never half of it.
func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// drop removes the marker and closes it (which unlocks it).
func (h *Hold) drop() {
	os.Remove(h.marker.Name())
	h.marker.Close()
}

// Release gives the hold up; the last holder restores the knob.
func (h *Hold) Release() error {
	if h == nil || h.marker == nil {
		return nil
	}
	unlock, err := h.k.lock()
	if err != nil {
		return err
	}
	defer unlock()
	h.drop()
	h.marker = nil
	_, err = h.k.settleLocked()
	return err
}

// Settle restores the knob's saved value when no live process holds it
// (`cclab clean` calls it, for holders that were killed), and says which
// value it restored ("" when none).
func (k Knob) Settle() (string, error) {
	if _, err := os.Stat(k.original()); errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	unlock, err := k.lock()
	if err != nil {
		return "", err
	}
	defer unlock()
	return k.settleLocked()
}

func (k Knob) settleLocked() (string, error) {
	b, err := os.ReadFile(k.original())
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("rcu_expedited: %w", err)
	}
	held, err := k.held()
	if err != nil || held {
		return "", err
	}
	saved := strings.TrimSpace(string(b))
	if saved != "0" && saved != "1" {
		// Not a value the knob ever had: nothing to put back.
		os.Remove(k.holders())
		return "", os.Remove(k.original())
	}
	if err := os.WriteFile(k.Path, []byte(saved+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("rcu_expedited: restore %s: %w", saved, err)
	}
	os.Remove(k.holders())
	return saved, os.Remove(k.original())
}

// held reports whether any run's marker is locked by a live process, and
// removes the markers of dead ones.
func (k Knob) held() (bool, error) {
	markers, err := filepath.Glob(filepath.Join(k.holders(), "*"))
	if err != nil {
		return false, fmt.Errorf("rcu_expedited: holders: %w", err)
	}
	held := false
	for _, m := range markers {
		f, err := os.OpenFile(m, os.O_RDWR, 0)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("rcu_expedited: %w", err)
		}
		if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
			held = true
		} else {
			os.Remove(m)
		}
		f.Close()
	}
	return held, nil
}

// lock serialises holders of every process on the lock file.
func (k Knob) lock() (func(), error) {
	if err := os.MkdirAll(k.StateRoot, 0o755); err != nil {
		return nil, fmt.Errorf("rcu_expedited: %w", err)
	}
	f, err := os.OpenFile(k.lockPath(), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("rcu_expedited: lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("rcu_expedited: lock: %w", err)
	}
	return func() { f.Close() }, nil
}
