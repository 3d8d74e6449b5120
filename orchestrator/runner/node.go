package runner

import (
	"bufio"
	"os"
	"strings"
	"time"

	"cclab/internal/cpustat"
	"cclab/rundir"
)

// ThisNode describes the machine; with idle > 0 it also watches the
// hypervisor's steal for that long (the machine as the run finds it).
func ThisNode(idle time.Duration) rundir.Node {
	n := rundir.Node{CPUs: cpustat.AllowedOrAll(), StealIdle: -1}
	n.Hostname, _ = os.Hostname()
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				n.CPU = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if idle > 0 {
		if m, err := cpustat.MarkSteal(); err == nil {
			time.Sleep(idle)
			if s, err := m.Since(); err == nil {
				n.StealIdle = s.Share
			}
		}
	}
	return n
}
