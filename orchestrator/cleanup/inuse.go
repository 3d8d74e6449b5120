package cleanup

import (
	"fmt"
	"os"

	"cclab/internal/runid"
)

// InUse lists what of run id is on this machine now: its namespaces, its
// state directory and its BPF pin directory. Empty means the id is free;
// anything else is a live topology or run of that id (or what a killed one
// left), which a new run of the id would tear down.
func InUse(id runid.ID) ([]string, error) {
	ns, err := Namespaces(id)
	if err != nil {
		return nil, err
	}
	var out []string
	if len(ns) > 0 {
		out = append(out, fmt.Sprintf("%d namespaces %s*", len(ns), id.Prefix()))
	}
	for _, dir := range []string{id.StateDir(), id.BPFDir()} {
		if _, err := os.Stat(dir); err == nil {
			out = append(out, dir)
		} else if !os.IsNotExist(err) {
			return nil, fmt.Errorf("run %s: %w", id, err)
		}
	}
	return out, nil
}
