// Package reproduce is the reproduction suite (`cclab reproduce
// NAME|all`): the papers' headline experiments on the faithful fabric, one
// file each in experiments/reproduce/ with the paper's claims and the
// paper's own numbers under `reproduce:` (spec.go reads and checks them).
// It is a client of both halves of the lab: Run runs each experiment once
// per seed through orchestrator/runner, analyses every variant with
// analysis/report, which takes the metrics the file's measure gives
// (analysis/report/measures.go: the suite computes none itself), and
// judges each claim (judge.go): on the median of the
// seeds whose variants were all judged faithful, in direction and within a
// factor of 2 of the paper's figure. Publish regenerates docs/results.md
// and the health section of docs/reproduction.md from the stored outcomes,
// so every number on the page comes from a run.
package reproduce
