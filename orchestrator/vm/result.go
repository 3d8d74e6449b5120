package vm

import (
	"fmt"
	"strconv"
	"strings"

	"cclab/kmod/law"
)

// The guest reports on the serial console in lines starting with Tag:
//
//	CCLAB-VM BOOT kernel=<uname -r> cpus=<n>
//	CCLAB-VM CHECK <name> PASS|FAIL [detail...]
//	CCLAB-VM METRIC <name> <value> [unit]
//	CCLAB-VM NOTE <name> [detail...]
//	CCLAB-VM DONE
//
// Anything else on the console (kernel messages) is kept for diagnosis.
const Tag = "CCLAB-VM"

// Check is one step of the guest test.
type Check struct {
	Name   string `json:"name"`
	Pass   bool   `json:"pass"`
	Detail string `json:"detail,omitempty"`
}

// Metric is a figure the guest measured.
type Metric struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
}

// Result is what one boot reported.
type Result struct {
	Series  string   `json:"series"`
	Kernel  string   `json:"kernel"` // uname -r in the guest
	Accel   string   `json:"accel"`  // kvm or tcg
	Booted  bool     `json:"booted"`
	Done    bool     `json:"done"` // the guest test ran to its end
	Checks  []Check  `json:"checks"`
	Metrics []Metric `json:"metrics"`
	Notes   []string `json:"notes,omitempty"` // "name detail", e.g. a part the kernel cannot run
	Seconds float64  `json:"seconds"`         // boot to power-off
	Console string   `json:"-"`
}

// parseLine folds one console line into r.
func (r *Result) parseLine(line string) {
	line = strings.TrimRight(line, "\r\n")
	i := strings.Index(line, Tag+" ")
	if i < 0 {
		return
	}
	f := strings.Fields(line[i+len(Tag)+1:])
	if len(f) == 0 {
		return
	}
	switch f[0] {
	case "BOOT":
		r.Booted = true
		for _, kv := range f[1:] {
			if v, ok := strings.CutPrefix(kv, "kernel="); ok {
				r.Kernel = v
			}
		}
	case "CHECK":
		if len(f) >= 3 && (f[2] == "PASS" || f[2] == "FAIL") {
			r.Checks = append(r.Checks, Check{Name: f[1], Pass: f[2] == "PASS", Detail: strings.Join(f[3:], " ")})
		}
	case "METRIC":
		if len(f) >= 3 {
			if v, err := strconv.ParseFloat(f[2], 64); err == nil {
				m := Metric{Name: f[1], Value: v}
				if len(f) >= 4 {
					m.Unit = f[3]
				}
				r.Metrics = append(r.Metrics, m)
			}
		}
	case "NOTE":
		r.Notes = append(r.Notes, strings.Join(f[1:], " "))
	case "DONE":
		r.Done = true
	}
}

// Err says why the run failed: no boot, unfinished, a failed check or a
// missing one of want. nil when everything passed.
func (r *Result) Err(want []string) error {
	if !r.Booted {
		return fmt.Errorf("%s: the guest never reported booting", r.Series)
	}
	var bad []string
	seen := map[string]bool{}
	for _, c := range r.Checks {
		seen[c.Name] = true
		if !c.Pass {
			bad = append(bad, c.Name+" ("+c.Detail+")")
		}
	}
	for _, w := range want {
		if !seen[w] {
			bad = append(bad, w+" (not reported)")
		}
	}
	if !r.Done {
		bad = append(bad, "the guest test did not finish")
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s (%s): %s", r.Series, r.Kernel, strings.Join(bad, "; "))
	}
	return nil
}

// Note returns the detail of the named note.
func (r *Result) Note(name string) (string, bool) {
	for _, n := range r.Notes {
		if k, v, _ := strings.Cut(n, " "); k == name {
			return v, true
		}
	}
	return "", false
}

// Metric returns the named metric.
func (r *Result) Metric(name string) (Metric, bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// requiredChecks are the steps every kernel's guest test must report,
// passed, besides lawChecks: the modules and parameters, the topologies,
// the law-specific flows and Debian's DCTCP.
var requiredChecks = []string{
	"load_cclab_int", "load_dctcp",
	"param_tcp_powertcp_gamma_ppm", "param_tcp_theta_powertcp_base_rtt_ns", "param_tcp_hpcc_eta_ppm",
	"param_tcp_hpcc_vai_enable", "param_tcp_swift_vai_sf_acks", "param_tcp_swift_beta_ppm",
	"topo_1switch", "topo_3switch",
	"flow_theta_small", "flow_theta_large", "flow_swift_low", "flow_swift_high",
	"flow_dctcp", "flow_theta_3sw", "flow_loss_theta", "loss_envelope_theta_powertcp", "no_leak_loss_theta",
	"hold_without_int_powertcp", "hold_without_int_hpcc", "int_seen_powertcp", "int_seen_hpcc",
	"window_follows_rtt_theta_powertcp", "window_follows_delay_swift", "window_follows_rtt_3switch",
	"ss_theta_large", "ss_swift_high", "no_leak_theta_3sw",
	"rmmod_cclab_int", "netem_rtt_1sw", "netem_rtt_3sw", "dmesg_clean",
}

// ownFlows are the laws whose flows the guest test checks under their own
// names (flow_theta_small, flow_swift_high, ...: requiredChecks).
var ownFlows = map[string]bool{"theta_powertcp": true, "swift": true}

// lawChecks are the steps the guest test reports for every law of the
// table with a module build (it loops over the modules Kbuild built):
// loaded, unloaded busy and idle, no socket left; and, unless the law's
// flows have their own names, a flow and its ss state.
func lawChecks() []string {
	var out []string
	for _, l := range law.All() {
		if !l.HasModule() {
			continue
		}
		n := l.String()
		out = append(out, "load_"+n, "rmmod_busy_"+n, "rmmod_idle_"+n, "no_leak_"+n)
		if !ownFlows[n] {
			out = append(out, "flow_"+n, "ss_"+n)
		}
	}
	return out
}

// requiredINT are the checks with real INT (switch, host agent, cclab_int),
// required on every kernel: the INT switch attaches with tcx on 6.12 and
// with classic cls_bpf filters on 6.1 (tcopt/intswitch/README.md).
var requiredINT = []string{
	"int_topo_1", "int_echoes_powertcp_1sw", "window_follows_int_powertcp_1sw",
	"int_echoes_hpcc_1sw", "window_follows_int_hpcc_1sw", "no_leak_int_1sw",
	"int_topo_3", "int_echoes_powertcp_3sw", "window_follows_int_powertcp_3sw",
	"int_echoes_hpcc_3sw", "window_follows_int_hpcc_3sw", "no_leak_int_3sw",
}

// Required lists the checks r's guest must have reported, passed: all of
// requiredChecks, lawChecks and requiredINT.
func Required(r *Result) []string {
	return append(append(append([]string{}, requiredChecks...), lawChecks()...), requiredINT...)
}
