package runner

import (
	"fmt"
	"os"
	"strings"

	"cclab/internal/cc"
	"cclab/kmod/law"
)

// registeredLaws returns the parameters in force of every registered
// cclab law by congestion-control name, for run.json's "cc" entries (other
// controls expose none).
func registeredLaws(opts cc.Options) (map[string]cc.Params, error) {
	regs, err := cc.List(opts)
	if err != nil {
		return nil, fmt.Errorf("registered laws: %w", err)
	}
	m := make(map[string]cc.Params, len(regs))
	for _, r := range regs {
		m[r.Name] = r.Params
	}
	return m, nil
}

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

// echoCCs are the registered congestion controls whose receivers must
// run them too: the ECN laws' (flows.Options.EchoCC).
func echoCCs(regs map[string]cc.Params) map[string]bool {
	out := map[string]bool{}
	for name, ps := range regs {
		if l, err := law.ParseLaw(ps.Law); err == nil && l.UsesECN() {
			out[name] = true
		}
	}
	return out
}
