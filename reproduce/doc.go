// Package reproduce is the reproduction suite (`cclab reproduce
// NAME|all`): the papers' headline experiments on the faithful fabric, one
// file each in experiments/reproduce/ with the paper's claims and the
// paper's own numbers under `reproduce:` (spec.go reads and checks them).
// It is a client of both halves of the lab: Run runs each experiment once
// per seed through orchestrator/runner, analyses every variant with
// analysis/report, which takes the metrics the file's measure gives
// (analysis/report/measures.go: the suite computes none itself), and
// judges each claim (judge.go): its statistic over the runs judged
// faithful, with a 95 % interval, against the claim's band. Publish
// regenerates docs/results.md and docs/results/health.md from the stored
// outcomes, so every number on either page comes from a run.
package reproduce
