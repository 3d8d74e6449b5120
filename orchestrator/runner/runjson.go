package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"

	"cclab/orchestrator/calibrate"
	"cclab/orchestrator/capture"
	"cclab/orchestrator/cpuqueue"
	"cclab/orchestrator/delay"
	"cclab/orchestrator/experiment"
	"cclab/orchestrator/fidelity"
	"cclab/orchestrator/health"
	"cclab/orchestrator/netbuild"
	"cclab/orchestrator/workload"
	"cclab/rundir"
	"cclab/topology"
	"cclab/topology/ideal"
)

// RunJSON is run.json as the orchestrator writes it (docs/run-directory.md):
// rundir.Info, which every reader relies on, and the orchestrator's own
// reports. TestRunJSONReadsAsInfo keeps the two in step.
type RunJSON struct {
	ID            string           `json:"id"`
	Variant       string           `json:"variant"` // the compared congestion control
	Started       string           `json:"started"`
	Finished      string           `json:"finished"`
	ClockOffsetNs int64            `json:"clock_offset_ns"`
	ZeroNs        int64            `json:"workload_zero_ns"` // CLOCK_MONOTONIC of workload time 0
	Seed          int64            `json:"seed"`
	Experiment    ExperimentJSON   `json:"experiment"`
	Topology      *topology.Plan   `json:"topology"`
	Hosts         netbuild.Options `json:"hosts"`
	BuildTiming   netbuild.Timing  `json:"build_timing"`
	// Stages is each stage's time, in the order they ran, the teardown last.
	Stages   []StageTime          `json:"stages"`
	Framing  rundir.Framing       `json:"framing"`
	CC       map[string]rundir.CC `json:"cc"`
	Kernel   rundir.Kernel        `json:"kernel"`
	Node     rundir.Node          `json:"node"`
	Versions map[string]string    `json:"versions"`
	Health   health.Report        `json:"health"`
	// Delay is where the propagation delay was and what held it.
	Delay delay.Report `json:"delay"`
	// UserCPUs are the CPUs this process's threads ran on during the
	// workload (emulation.user_cpu); absent: wherever the scheduler put
	// them.
	UserCPUs []int `json:"user_cpus,omitempty"`
	// Calibration is this variant's measurement of its paths; Derived
	// the laws' parameters, from the calibration of variant DerivedFrom.
	Calibration *calibrate.Result  `json:"calibration,omitempty"`
	Derived     *calibrate.Derived `json:"derived_params,omitempty"`
	DerivedFrom string             `json:"derived_from,omitempty"`
	// DerivedApplied: the laws ran with Derived (false: the experiment
	// has no `laws:` section and they kept their registered parameters).
	DerivedApplied bool `json:"derived_applied"`
	// CPUQueue is what the CPU queue probe saw during the workload.
	CPUQueue *cpuqueue.Report `json:"cpu_queue,omitempty"`
	// Fidelity is the verdict on the emulation (docs/fidelity.md).
	Fidelity     fidelity.Verdict  `json:"fidelity"`
	Capture      []capture.Stats   `json:"capture"`
	CaptureDrops uint64            `json:"capture_drops"`
	Flows        rundir.FlowCounts `json:"flows"`
	Workload     []workload.Flow   `json:"workload_flows"`
	Extensions   map[string]any    `json:"extensions,omitempty"`
	Errors       []string          `json:"errors,omitempty"`
	Summary      Summary           `json:"summary"`
	// Skipped are the experiment's compared names its run left out
	// (skip_missing: known, but not available in this kernel), and why.
	Skipped []Skip `json:"skipped,omitempty"`
	// Interrupted: a signal ended the run before its workload did.
	Interrupted *rundir.Interrupted `json:"interrupted,omitempty"`
}

// ExperimentJSON is the parsed experiment with its source text.
type ExperimentJSON struct {
	*experiment.Experiment
	Source string `json:"source"`
	// SHA256 is the source's content hash: which version of the file the
	// run was made from, as a sweep's plan records it.
	SHA256 string `json:"source_sha256"`
}

// sourceSHA256 is the hex sha256 of an experiment file's text.
func sourceSHA256(src string) string {
	sum := sha256.Sum256([]byte(src))
	return hex.EncodeToString(sum[:])
}

// ThisKernel is the kernel this runs on, as run.json records it.
func ThisKernel() rundir.Kernel {
	rd := func(p string) string {
		b, _ := os.ReadFile(p)
		return strings.TrimSpace(string(b))
	}
	return rundir.Kernel{Release: rd("/proc/sys/kernel/osrelease"), Version: rd("/proc/sys/kernel/version")}
}

// framing: TCP timestamps take 12 bytes of every segment.
func framing(timestamps, intOption bool) ideal.Framing {
	f := ideal.DefaultFraming
	if timestamps {
		f = ideal.Framing{MSS: 1448, HeaderBytes: 66}
	}
	if intOption {
		// The INT option takes what is left of the 40 option bytes: 40
		// without timestamps, 28 with them (tcopt/README.md).
		opt := 40
		if timestamps {
			opt = 28
		}
		f.MSS -= opt
		f.HeaderBytes += opt
	}
	return f
}
