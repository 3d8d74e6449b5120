package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"cclab/internal/cgroup2"
)

// Cgroup2Mount finds where the cgroup v2 hierarchy is mounted (here
// /sys/fs/cgroup/unified in hybrid mode, /sys/fs/cgroup on unified hosts).
func Cgroup2Mount() (string, error) { return cgroup2.Mount() }

// cgroupOf is the cgroup v2 path of a process relative to the mount ("/..").
func cgroupOf(pid int) (string, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return "", fmt.Errorf("cgroup of pid %d: %w", pid, err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "0::"); ok {
			return rest, nil
		}
	}
	return "", fmt.Errorf("cgroup of pid %d: no cgroup v2 entry", pid)
}

// moveTo writes pid into a cgroup directory's cgroup.procs, which moves the
// whole process (all its threads).
func moveTo(dir string, pid int) error {
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
		return fmt.Errorf("move pid %d to cgroup %s: %w", pid, dir, err)
	}
	return nil
}
