package rundir

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
)

// The files of one run directory (one compared congestion control).
const (
	RunJSON     = "run.json"     // what ran, how faithfully, and a summary
	FlowsCSV    = "flows.csv"    // one row per workload flow, as the application saw it
	QueuesCSV   = "queues.csv"   // the switch ports' queue samples
	CCTraceCSV  = "cc_trace.csv" // the laws' per-ACK trace, when traced
	PFCCSV      = "pfc.csv"      // the PFC controller's pauses and resumes, lossless runs
	PcapDir     = "pcap"         // one capture per captured port
	AnalysisDir = "analysis"     // what `cclab analyze` wrote
)

// CaptureFile is the capture of one host's interface, relative to the run
// directory.
func CaptureFile(host, iface string) string {
	return filepath.Join(PcapDir, host+"-"+iface+".pcap")
}

// Captures lists the run's captures (pcap and pcapng) in name order.
func Captures(dir string) ([]string, error) {
	var out []string
	for _, pat := range []string{"*.pcap", "*.pcapng"} {
		m, err := filepath.Glob(filepath.Join(dir, PcapDir, pat))
		if err != nil {
			return nil, err
		}
		out = append(out, m...)
	}
	sort.Strings(out)
	return out, nil
}

// IsRun reports whether dir is a finished run directory (it has run.json).
// An error other than "does not exist" counts as a run, so that reading it
// reports the error.
func IsRun(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, RunJSON))
	return err == nil || !errors.Is(err, os.ErrNotExist)
}

// Variants lists the run directories directly under an experiment's
// directory: `cclab run` writes one per compared congestion control
// (results/<id>/<cc>/).
func Variants(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, e.Name(), RunJSON)); err == nil {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// QueuesColumns is queues.csv's header: one row per switch port per
// sampling tick (tcopt/intswitch's sampler).
var QueuesColumns = []string{"time_ns", "node", "iface", "qlen_bytes", "tx_bytes"}

// CCTraceColumns is cc_trace.csv's header: one row per law decision
// (kmod/lawload's trace).
var CCTraceColumns = []string{"time_ns", "sock", "cc", "cwnd_bytes", "pacing_bps", "signal", "signal_name", "note", "law_cwnd_bytes", "rtt_us", "nhops"}
