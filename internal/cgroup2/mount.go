// Package cgroup2 finds the cgroup v2 hierarchy, wherever the machine
// mounts it (/sys/fs/cgroup, or /sys/fs/cgroup/unified in hybrid mode).
package cgroup2

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Mount returns the mount point of the cgroup v2 hierarchy.
func Mount() (string, error) {
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
