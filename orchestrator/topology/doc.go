// Package topology reads topology files (topologies/*.yaml), validates them
// and expands them into a Plan: fat-trees, leaf-spine fabrics, dumbbells and
// stars (N:1 incast), with per-tier link rates, buffers and delays.
package topology
