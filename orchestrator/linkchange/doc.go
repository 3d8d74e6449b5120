// Package linkchange changes a running network's links: a link's (or a
// whole tier's) rate, delay, buffer and state, in force at every place
// that holds them (the ports' HTB classes and byte FIFOs, the INT
// switch's port rate, the delay line's classes), and records when each
// change took effect. `cclab link set` asks a live topology's supervisor
// for one (orchestrator/live); a run applies an experiment's events with
// the same Applier.
//
// A target names links three ways: "a:b" is the link between nodes a
// and b, both directions; "a>b" only a's port towards b (rate and
// buffer); anything else is a tier, every link of it (the topology
// file's link tier names: host, edge_agg, agg_core, ...).
package linkchange
