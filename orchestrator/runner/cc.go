package runner

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"cclab/kmod/law"
	"cclab/kmod/lawload"
)

// registeredLaws returns the parameters in force of every registered
// cclab law by congestion-control name, for run.json's "cc" entries (other
// controls expose none).
func registeredLaws(opts lawload.Options) (map[string]lawload.Params, error) {
	regs, err := lawload.List(opts)
	if err != nil {
		return nil, fmt.Errorf("registered laws: %w", err)
	}
	m := make(map[string]lawload.Params, len(regs))
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
func echoCCs(regs map[string]lawload.Params) map[string]bool {
	out := map[string]bool{}
	for name, ps := range regs {
		if l, err := law.ParseLaw(ps.Law); err == nil && l.UsesECN() {
			out[name] = true
		}
	}
	return out
}

// splitBuilds separates the laws whose kernel module (kmod/) is loaded,
// which run as the module under the law's name, and those whose name a
// module that is not cclab's holds (Debian's tcp_dctcp: the kernel's own
// law runs), from those the run registers as eBPF struct_ops.
func splitBuilds(laws []string) (modules, foreign, ebpfLaws []string) {
	for _, l := range laws {
		switch {
		case lawload.ModuleLoaded(l):
			modules = append(modules, l)
		case lawload.ForeignModule(l):
			foreign = append(foreign, l)
		default:
			ebpfLaws = append(ebpfLaws, l)
		}
	}
	return modules, foreign, ebpfLaws
}

// checkForeign refuses a `laws:` setting for a law whose name a module
// that is not cclab's holds: the run could not apply it. Without one, the
// kernel's module runs with its own parameters, and the log says so.
func checkForeign(foreign, fileSettings []string, opt Options) error {
	for _, l := range foreign {
		if s := lawload.SettingsFor([]string{l}, fileSettings); len(s) > 0 {
			return fmt.Errorf("laws: %v set %s, but the congestion control %s is the kernel module tcp_%s, not cclab's: rmmod tcp_%s to run cclab's eBPF %s", s, l, l, l, l, l)
		}
		fmt.Fprintf(opt.Log, "%s is the kernel's own module tcp_%s (not cclab's), with its own parameters\n", l, l)
	}
	return nil
}

// applyToModules writes the experiment's settings and the derived
// parameters into the loaded modules of laws, in place of a registration
// (a module holds its law's name: the eBPF build cannot register beside
// it).
func (ls *lawState) applyToModules(laws, settings []string, opt Options) error {
	for _, l := range laws {
		want, err := lawload.Resolve([]string{l}, lawload.SettingsFor([]string{l}, settings))
		if err != nil {
			return fmt.Errorf("law %s (kernel module): %w", l, err)
		}
		got, err := lawload.ApplyToModule(want[0])
		if err != nil {
			return fmt.Errorf("law %s: %w", l, err)
		}
		if got.String() != want[0].String() {
			return fmt.Errorf("law %s: module tcp_%s holds %s after the writes, want %s", l, l, got, want[0])
		}
		if ls.modules == nil {
			ls.modules = map[string]lawload.Params{}
		}
		ls.modules[l] = got
		fmt.Fprintf(opt.Log, "%s runs as kernel module tcp_%s with %s\n", l, l, got)
	}
	return nil
}

// moduleInForce reads the parameters of a cclab law running as its
// loaded kernel module, for run.json; false for anything else.
func moduleInForce(name string) (lawload.Params, bool) {
	if !slices.Contains(lawload.Laws(), name) || !lawload.ModuleLoaded(name) {
		return lawload.Params{}, false
	}
	like, err := lawload.Resolve([]string{name}, nil)
	if err != nil {
		return lawload.Params{}, false
	}
	ps, err := lawload.ReadModule(like[0])
	return ps, err == nil
}
