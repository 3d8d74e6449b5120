package cleanup

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"cclab/internal/cgroup2"
	"cclab/internal/runid"
)

// runCgroups lists the cgroup v2 directories of run id: "cclab-<id>" (the
// INT host agent's) and "cclab-<id>-*" (tests'), deepest first so they can
// be removed in order. No cgroup v2 mount means none.
func runCgroups(id runid.ID) ([]string, error) {
	root, err := cgroup2.Mount()
	if err != nil {
		return nil, nil
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("list cgroups: %w", err)
	}
	own := runid.Mark + string(id)
	var dirs []string
	for _, e := range ents {
		if !e.IsDir() || (e.Name() != own && !strings.HasPrefix(e.Name(), id.Prefix())) {
			continue
		}
		filepath.WalkDir(filepath.Join(root, e.Name()), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
	}
	slices.Reverse(dirs) // children after their parents in walk order
	return dirs, nil
}

// cgroupRunIDs returns the runs that own cgroups, for CleanAll.
func cgroupRunIDs() []runid.ID {
	root, err := cgroup2.Mount()
	if err != nil {
		return nil
	}
	ents, _ := os.ReadDir(root)
	var ids []runid.ID
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), runid.Mark)
		if !ok || !e.IsDir() {
			continue
		}
		rest, _, _ = strings.Cut(rest, "-")
		if id, err := runid.Parse(rest); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// removeCgroups removes the run's cgroups (empty once its processes are
// gone; rmdir is the only way to remove a cgroup).
func removeCgroups(id runid.ID, rep *Report) error {
	dirs, err := runCgroups(id)
	if err != nil {
		return err
	}
	var errs []error
	for _, d := range dirs {
		if err := os.Remove(d); err != nil && !os.IsNotExist(err) {
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
			continue
		}
		rep.Cgroups = append(rep.Cgroups, d)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%v", errs)
	}
	return nil
}
