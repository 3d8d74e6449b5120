// Package envelope measures the faithful-load envelope of this machine for
// an experiment: the experiment runs again and again at each of a list of
// loads (the WebSearch-style entries' `load`, or the incast entries'
// `fan_in`), several times each, and every variant of every run keeps its
// fidelity verdict, its saturated windows and its CPU queue. The
// envelope's edge is the highest load whose runs were all faithful
// (docs/performance.md, "The faithful-load envelope").
package envelope
