package cleanup

import (
	"os"

	"cclab/internal/runid"
)

// Remains lists what of run id exists: its namespaces, state and BPF
// directories, cgroups. Empty after a clean teardown or Clean; tests
// assert it.
func Remains(id runid.ID) ([]string, error) {
	out, err := Namespaces(id)
	if err != nil {
		return nil, err
	}
	for _, d := range []string{id.StateDir(), id.BPFDir()} {
		if _, err := os.Stat(d); err == nil {
			out = append(out, d)
		}
	}
	cgs, err := runCgroups(id)
	if err != nil {
		return nil, err
	}
	return append(out, cgs...), nil
}
