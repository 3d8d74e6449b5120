// Package workload turns an experiment's workload entries into the concrete
// list of flows of a run: who sends how much to whom, when, with which
// congestion control. Generation is pure and seeded: the same experiment,
// topology and seed give the same flows.
package workload
