// Package report turns a run directory (or captures from anywhere) into the
// tables, plots and pages the papers report, and the measures the
// reproduction suite's claims judge (measures.go). Analyze computes;
// Write puts the result on disk.
package report
