// Package newlaw holds the template of a new law (testdata: reno_int, a
// Reno that halves on an INT queue above a threshold) and the test that
// adds it to a copy of the tree by the steps of docs/architecture.md
// ("How to add a law") and only those: it must build, pass the law
// tests, register, carry a flow and show in `cclab law params`.
package newlaw
