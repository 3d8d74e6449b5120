package agent

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Cgroup2Mount finds where the cgroup v2 hierarchy is mounted (here
// /sys/fs/cgroup/unified in hybrid mode, /sys/fs/cgroup on unified hosts).
func Cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("find cgroup2 mount: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ID parent major:minor root mountpoint options... - fstype source opts
		fields := strings.Fields(sc.Text())
		for i, fld := range fields {
			if fld == "-" && i+1 < len(fields) && fields[i+1] == "cgroup2" && len(fields) > 4 {
				return fields[4], nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("find cgroup2 mount: %w", err)
	}
	return "", errors.New("find cgroup2 mount: cgroup v2 is not mounted")
}

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
