// Package bpfpin lets go of shared BPF map pins once no loaded program uses
// their maps: the one rule by which the laws (kmod/lawload) and the INT host
// agent (tcopt/agent) release the maps they share in the laws' pin
// directory, whichever of them is the last user.
package bpfpin

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/cilium/ebpf"
)

// Users maps each map that loaded programs use to the types of those
// programs. Programs in skip are not counted: a caller's own, on their way
// out (the kernel frees a detached program some time after its last
// reference goes).
func Users(skip ...ebpf.ProgramID) (map[ebpf.MapID]map[ebpf.ProgramType]bool, error) {
	used := map[ebpf.MapID]map[ebpf.ProgramType]bool{}
	var id ebpf.ProgramID
	for {
		next, err := ebpf.ProgramGetNextID(id)
		if errors.Is(err, os.ErrNotExist) {
			return used, nil
		}
		if err != nil {
			return nil, fmt.Errorf("walk BPF programs: %w", err)
		}
		id = next
		if slices.Contains(skip, id) {
			continue
		}
		p, err := ebpf.NewProgramFromID(id)
		if err != nil {
			continue // gone meanwhile
		}
		info, err := p.Info()
		p.Close()
		if err != nil {
			continue
		}
		ids, _ := info.MapIDs()
		for _, m := range ids {
			if used[m] == nil {
				used[m] = map[ebpf.ProgramType]bool{}
			}
			used[m][info.Type] = true
		}
	}
}

// UnpinUnused removes the pin at path unless one of used's programs uses
// its map, and returns the types of the programs that do. A missing pin is
// no error. (A user that pins the map and has not yet loaded its programs
// is not seen: the pin then goes, and that user's map is no longer shared.)
func UnpinUnused(path string, used map[ebpf.MapID]map[ebpf.ProgramType]bool) (map[ebpf.ProgramType]bool, error) {
	m, err := ebpf.LoadPinnedMap(path, nil)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	info, err := m.Info()
	m.Close()
	if err != nil {
		return nil, fmt.Errorf("info %s: %w", path, err)
	}
	id, _ := info.ID()
	if users, ok := used[id]; ok {
		return users, nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("unpin %s: %w", path, err)
	}
	return nil, nil
}
