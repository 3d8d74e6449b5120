package reproduce

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// A Need is a congestion control an experiment compares: its name in
// tcp_available_congestion_control and, for cclab's laws, how it is
// registered (`cclab cc load LAW SETTINGS...`, under Name when that is not
// the law's own name).
type Need struct {
	Name     string   `json:"name"`
	Law      string   `json:"law,omitempty"` // empty: a kernel congestion control (cubic)
	Settings []string `json:"settings,omitempty"`
}

// LoadCommand is how a user registers it.
func (n Need) LoadCommand() string {
	if n.Law == "" {
		return ""
	}
	s := "cclab cc load " + n.Law
	if len(n.Settings) > 0 {
		s += " " + strings.Join(n.Settings, " ")
	}
	if n.Name != n.Law {
		s += " (registered as " + n.Name + ")"
	}
	return s
}

// Metric names a measured number and how to print it.
type Metric struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	Unit  string `json:"unit"` // "ms", "KB", "%", "x" (slowdown) or "" (plain)
}

// A Claim is one statement of a paper, checked against the metrics of the
// variants it Needs. Check returns what was measured (in words and
// numbers) and whether it agrees; ok is false when a number it reads is
// not measurable (NaN).
type Claim struct {
	ID    string
	Paper string // the paper's claim, in prose, with its section
	Needs []string
	Check func(m map[string]Metrics) (measured string, agrees, ok bool)
	// Note is what to bear in mind when reading the verdict (scaling
	// effects known in advance); printed with every verdict.
	Note string
}

// An Experiment is one entry of the suite.
type Experiment struct {
	Name    string
	Title   string
	Paper   string // the paper and section
	File    string // experiments/reproduce/<file>, relative to the repository
	Needs   []Need
	Metrics []Metric
	// Measure extracts the metrics of one variant.
	Measure func(v view) Metrics
	Claims  []Claim
	// Figures are the analysis figures (file stems) shown per variant.
	Figures []string
}

// Base RTTs of the scaled topologies (one MTU's serialisation per hop at
// 100/200 Mbit/s, plus the ~50 us host stack floor measured on this
// machine): the laws' base_rtt_ns and Swift's target.
const (
	starRTTns     = 300_000
	fattreeRTTns  = 800_000
	hadoopRTTns   = 550_000
	hostMbps      = "100"
	drainBytes    = 6_000 // "drained": at most four packets queued
	throughputWin = 0.9   // "line rate": 90 % of the link in a 1 ms window
)

func lawNeed(law, name string, rttNs int, extra ...string) Need {
	s := []string{"host_bw_mbps=" + hostMbps, "base_rtt_ns=" + strconv.Itoa(rttNs)}
	if law == "swift" {
		// The scaled network's delay is serialisation, not per-hop
		// propagation: the whole base RTT is the base target.
		s = append(s, "base_target_ns="+strconv.Itoa(rttNs), "per_hop_ns=0")
	}
	if law == "theta_powertcp" {
		// The line-rate window HostBw * tau, as PowerTCP's default and
		// the paper's implementation (kmod/law/README.md): theta's own
		// default (16 MiB) lets one RTT drop of a single ACK (power at
		// its floor) multiply the window up to megabytes.
		s = append(s, "max_cwnd_bytes=0")
	}
	return Need{Name: name, Law: law, Settings: append(s, extra...)}
}

var vaiSF = []string{"vai_enable=1", "vai_sf_acks=30"}

func cubic() Need { return Need{Name: "cubic"} }

// All is the suite, in the order of the issue.
func All() []*Experiment {
	return []*Experiment{
		hpccLongShort(), hpccIncast(), hpccMice(), fairnessJoinLeave(),
		powertcpIncast(), powertcpIncastLarge(),
		websearch("websearch-20", "20"), websearch("websearch-60", "60"), websearchIncast(),
		vaiIncast(), vaiHadoop(),
	}
}

// Find returns the named experiments ("all" for every one).
func Find(names []string) ([]*Experiment, error) {
	all := append(All(), Smoke())
	if len(names) == 1 && names[0] == "all" {
		return All(), nil
	}
	var out []*Experiment
	for _, n := range names {
		i := slices.IndexFunc(all, func(e *Experiment) bool { return e.Name == n })
		if i < 0 {
			var have []string
			for _, e := range all {
				have = append(have, e.Name)
			}
			return nil, fmt.Errorf("no reproduction experiment %q (have: all, %s)", n, strings.Join(have, ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}

// ms formats nanoseconds as milliseconds.
func ms(ns float64) string {
	if math.IsInf(ns, 1) {
		return "never"
	}
	return strconv.FormatFloat(ns/1e6, 'f', 2, 64) + " ms"
}

func kb(b float64) string { return strconv.FormatFloat(b/1e3, 'f', 1, 64) + " KB" }

func f2(x float64) string {
	if math.IsInf(x, 1) {
		return "never"
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// finite reports whether every value is a number.
func finite(xs ...float64) bool {
	for _, x := range xs {
		if x != x {
			return false
		}
	}
	return true
}
