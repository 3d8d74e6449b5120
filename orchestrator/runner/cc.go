package runner

import (
	"fmt"
	"os"
	"strings"
)

// LawCCs are the congestion-control laws cclab ships (loaded by
// `cclab cc load`); the default experiment compares every one that is
// loaded against cubic.
var LawCCs = []string{"powertcp", "theta_powertcp", "hpcc", "swift", "dctcp"}

// AvailableCCs lists the congestion controls registered in this kernel.
func AvailableCCs() (map[string]bool, error) {
	data, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
	if err != nil {
		return nil, fmt.Errorf("read available congestion controls: %w", err)
	}
	out := map[string]bool{}
	for _, f := range strings.Fields(string(data)) {
		out[f] = true
	}
	return out, nil
}

func names(m map[string]bool) string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	return strings.Join(sortStrings(s), " ")
}
