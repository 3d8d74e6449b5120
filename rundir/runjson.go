package rundir

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"cclab/topology"
	"cclab/topology/ideal"
)

// Info is the part of run.json that every reader relies on. The
// orchestrator's run.json has more (the experiment's text, the health and
// delay reports, the calibration: orchestrator/runner.RunJSON); a test
// there checks that what it writes reads back as an Info.
type Info struct {
	ID            string `json:"id"`
	Variant       string `json:"variant"` // the compared congestion control
	Started       string `json:"started"` // RFC 3339
	Finished      string `json:"finished"`
	ClockOffsetNs int64  `json:"clock_offset_ns"`  // CLOCK_REALTIME - CLOCK_MONOTONIC
	ZeroNs        int64  `json:"workload_zero_ns"` // CLOCK_MONOTONIC of workload time 0
	Seed          int64  `json:"seed"`
	Experiment    struct {
		Name     string `json:"name"`
		Topology string `json:"topology"`
		// Source is the experiment file's text (its `reproduce:` block
		// names the measure the analysis takes).
		Source string `json:"source"`
	} `json:"experiment"`
	Topology     *topology.Plan `json:"topology"`
	Framing      *Framing       `json:"framing"`
	CC           map[string]CC  `json:"cc"`
	Kernel       Kernel         `json:"kernel"`
	CaptureDrops uint64         `json:"capture_drops"` // packets the capture rings dropped
	Flows        FlowCounts     `json:"flows"`
	Errors       []string       `json:"errors,omitempty"`
	// Fidelity is the emulation's verdict; nil in runs made before it.
	Fidelity *Fidelity `json:"fidelity"`
	// Interrupted is set when a signal ended the run before its workload
	// did: its flows and captures stop where the signal cut them.
	Interrupted *Interrupted `json:"interrupted,omitempty"`
	// Extensions: what the analysis reads of the extensions' records.
	Extensions Extensions `json:"extensions"`
	// Calibration is the measurement of the run's paths (nil when the
	// run did not calibrate): the analysis takes its RTT for Jain's window.
	Calibration *Calibration `json:"calibration"`
}

// Interrupted says what ended a run early.
type Interrupted struct {
	Signal string `json:"signal"` // "SIGHUP"; "" when cancelled otherwise
	At     string `json:"at"`     // RFC 3339, when the signal came
	Cause  string `json:"cause"`  // "interrupted by SIGHUP (the parent process exited)"
}

// Calibration is what readers take from run.json's calibration
// (orchestrator/calibrate.Result).
type Calibration struct {
	Classes []CalibratedClass `json:"classes"`
}

// CalibratedClass is one class of path as calibrated: its switches and
// its loaded RTT floor, the RTT the laws are derived from.
type CalibratedClass struct {
	Switches int   `json:"switches"`
	FloorNs  int64 `json:"loaded_floor_ns"`
}

// LargestRTT is the largest loaded RTT floor of the calibrated classes
// (0 without a calibration).
func (c *Calibration) LargestRTT() time.Duration {
	var rtt time.Duration
	if c == nil {
		return 0
	}
	for _, cl := range c.Classes {
		rtt = max(rtt, time.Duration(cl.FloorNs))
	}
	return rtt
}

// Framing is how payload became wire bytes for the ideal FCT.
type Framing struct {
	MSS         int `json:"mss"`
	HeaderBytes int `json:"header_bytes"`
}

// Ideal is the framing for topology/ideal; a run without one used
// ideal.DefaultFraming.
func (f *Framing) Ideal() ideal.Framing {
	if f == nil || f.MSS <= 0 {
		return ideal.DefaultFraming
	}
	return ideal.Framing{MSS: f.MSS, HeaderBytes: f.HeaderBytes}
}

// CC is one congestion control used in the run.
type CC struct {
	Flows int `json:"flows"`
	// Params are the parameters in force, when the control exposes them.
	Params map[string]any `json:"params,omitempty"`
	// Build is which build of a cclab law ran: BuildEBPF, BuildKmod or
	// BuildForeign.
	Build string `json:"build,omitempty"`
}

// The builds of a law (kmod/README.md, kmod/bpf/README.md).
const (
	BuildEBPF = "ebpf"          // struct_ops, registered by the run
	BuildKmod = "kernel module" // cclab's tcp_<law>.ko, loaded beforehand
	// BuildForeign: a module that is not cclab's holds the law's name
	// (Debian's tcp_dctcp), and ran with its own parameters.
	BuildForeign = "kernel's own module"
)

// Kernel identifies the kernel the run ran on.
type Kernel struct {
	Release string `json:"release"`
	Version string `json:"version"`
}

// Node is the machine a run ran on, so that runs of a sweep spread over
// many can be told apart.
type Node struct {
	Hostname string `json:"hostname"`
	CPU      string `json:"cpu"`  // the first CPU's model name
	CPUs     []int  `json:"cpus"` // the CPUs the run may use (its cpuset)
	// StealIdle is the share of all CPU time the hypervisor took over a
	// short window before the run built anything (-1: not measured).
	StealIdle float64 `json:"steal_idle_share"`
}

// FlowCounts counts the workload's flows by outcome.
type FlowCounts struct {
	Total  int `json:"total"`
	OK     int `json:"ok"`
	Failed int `json:"failed"`
}

// Fidelity is the verdict on the emulation (docs/fidelity.md): "faithful",
// or "degraded" with the broken invariants, or "interrupted".
type Fidelity struct {
	Verdict string   `json:"verdict"`
	Reasons []string `json:"reasons"`
}

// ReadInfo reads the run.json of run directory dir.
func ReadInfo(dir string) (*Info, error) {
	path := filepath.Join(dir, RunJSON)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", RunJSON, err)
	}
	var ri Info
	if err := json.Unmarshal(b, &ri); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return &ri, nil
}
