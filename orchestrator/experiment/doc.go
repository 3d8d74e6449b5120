// Package experiment reads experiment files (experiments/*.yaml): which
// topology, which workload (long flows, incast, Poisson arrivals from a
// flow-size CDF, query/incast mixes), which congestion controls, host
// settings and capture. Every error names the file and line, and is found
// before anything is created.
package experiment
