package netbuild

import (
	"context"
	"fmt"
	"sort"
	"time"

	"cclab/internal/runid"
	"cclab/topology"
)

// BenchResult holds the build and teardown times of repeated runs of one
// plan (each with a fresh run id).
type BenchResult struct {
	Name       string          `json:"name"`
	Namespaces int             `json:"namespaces"`
	Links      int             `json:"links"`
	Up         []time.Duration `json:"up_ns"`
	Down       []time.Duration `json:"down_ns"`
	Last       Timing          `json:"last_timing"`
}

// Median returns the median of ds.
func Median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// Bench builds and tears down p rounds times and reports each duration.
// progress, if not nil, is called after each round.
func Bench(ctx context.Context, p *topology.Plan, opt Options, rounds int, progress func(round int, up, down time.Duration)) (BenchResult, error) {
	r := BenchResult{Name: p.Name, Namespaces: len(p.Nodes), Links: len(p.Links)}
	for i := 0; i < rounds; i++ {
		id := runid.New()
		t := time.Now()
		n, err := Up(ctx, id, p, opt)
		if err != nil {
			return r, fmt.Errorf("bench %s round %d: %w", p.Name, i, err)
		}
		up := time.Since(t)
		r.Last = n.Timing
		t = time.Now()
		if err := n.Down(ctx); err != nil {
			return r, fmt.Errorf("bench %s round %d: down: %w", p.Name, i, err)
		}
		down := time.Since(t)
		r.Up = append(r.Up, up)
		r.Down = append(r.Down, down)
		if progress != nil {
			progress(i, up, down)
		}
	}
	return r, nil
}
