// Package topology reads topology files (topologies/*.yaml), validates them
// and expands them into a Plan: fat-trees, leaf-spine fabrics, dumbbells,
// stars (N:1 incast) and lines, with per-tier link rates, buffers and
// delays. The file format is described in topologies/README.md.
package topology
