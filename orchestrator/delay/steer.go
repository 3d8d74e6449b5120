package delay

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"cclab/internal/cpustat"
	"cclab/internal/nsexec"
)

// Steer sets every interface of the namespaces to hand its received
// packets (RPS) to the CPUs this process may use (its cpuset) other than
// the line's: the softirq work of
// forwarding and receiving then never runs on the line's CPU, where it
// would hold the line up for a whole batch (hundreds of microseconds on
// a loaded machine). The line's own sends hand their
// packets over the same way.
func Steer(namespaces []string, lineCPU int) error {
	var mask uint64
	for _, c := range cpustat.AllowedOrAll() {
		if c != lineCPU && c < 64 {
			mask |= 1 << c
		}
	}
	val := strconv.FormatUint(mask, 16)
	for _, ns := range namespaces {
		err := nsexec.WithSysfs(ns, func(root string) error {
			files, err := filepath.Glob(filepath.Join(root, "class/net/*/queues/rx-*/rps_cpus"))
			if err != nil {
				return err
			}
			for _, f := range files {
				if filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(f)))) == "lo" {
					continue
				}
				if err := os.WriteFile(f, []byte(val), 0); err != nil {
					return fmt.Errorf("rps_cpus %s: %w", f, err)
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("steer packet processing off CPU %d: %w", lineCPU, err)
		}
	}
	return nil
}
