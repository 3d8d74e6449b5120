// Package runner runs an experiment end to end: it checks everything it can
// before creating anything (experiment, topology, congestion controls,
// workload), then for each compared congestion control builds the
// topology, measures the RTT noise floor, starts captures, health sampling
// and any run extensions, runs the flows, and writes the run directory
// (docs/run-directory.md). Whatever happens, it tears down what it built.
package runner
