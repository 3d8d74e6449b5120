// Package reproduce is the reproduction suite (`cclab reproduce NAME|all`):
// a registry of the papers' headline experiments, scaled to one machine
// (experiments/reproduce/), each with the paper's claims as predicates over
// the analysis of its runs. Run runs the experiments through the runner,
// analyses every variant with analysis/report, extracts the metrics the
// claims read and evaluates them: agrees, disagrees, or could not run (and
// why: a law not loaded, the INT switch not active, a metric not
// measurable). Page regenerates docs/results.md and the health section of
// docs/reproduction.md from the stored outcomes, so every number on the
// page comes from a run.
package reproduce
