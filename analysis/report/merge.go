package report

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"cclab/rundir"
)

// Analyze analyses a run directory, or an experiment directory holding
// one run directory per congestion control: then the variants are
// analysed one by one and put side by side in one Analysis.
func Analyze(ctx context.Context, dir string, cfg Config) (*Analysis, error) {
	if rundir.IsRun(dir) {
		return AnalyzeRun(ctx, dir, cfg)
	}
	vs, err := rundir.Variants(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if len(vs) == 0 {
		return nil, fmt.Errorf("%s: no run.json and no run directories in it: not a run", dir)
	}
	var parts []*Analysis
	begin := time.Now()
	for i, v := range vs {
		if cfg.Progress != nil {
			msg := fmt.Sprintf("variant %s (%d of %d)", filepath.Base(v), i+1, len(vs))
			if i > 0 { // the mean pace so far
				left := time.Since(begin) / time.Duration(i) * time.Duration(len(vs)-i)
				msg += fmt.Sprintf(", about %v to go", left.Round(time.Second))
			}
			cfg.Progress(msg)
		}
		a, err := AnalyzeRun(ctx, v, cfg)
		if err != nil {
			return nil, fmt.Errorf("variant %s: %w", filepath.Base(v), err)
		}
		parts = append(parts, a)
	}
	return merge(dir, parts, cfg.Defaults()), nil
}

// merge puts variants side by side: everything named per variant keeps
// its variant as a prefix; the tables per law are recomputed over all.
func merge(dir string, parts []*Analysis, cfg Config) *Analysis {
	m := &Analysis{Source: dir, RunID: parts[0].RunID, Version: AnalysisVersion, Experiment: parts[0].Experiment, Topology: parts[0].Topology,
		Window: parts[0].Window, Config: parts[0].Config}
	for _, a := range parts {
		v := filepath.Base(a.Source) + "/"
		for _, c := range a.Captures {
			c.File = v + c.File
			m.Captures = append(m.Captures, c)
		}
		for _, f := range a.Flows {
			f.ID = v + f.ID
			if f.CC == "" {
				f.CC = filepath.Base(a.Source)
			}
			f.Start -= a.Origin // each variant keeps its own time zero
			if f.End > 0 {
				f.End -= a.Origin
			}
			m.Flows = append(m.Flows, f)
		}
		for _, mm := range a.Mismatches {
			mm.Flow = v + mm.Flow
			m.Mismatches = append(m.Mismatches, mm)
		}
		for _, g := range a.Fairness {
			g.Bottleneck = v + g.Bottleneck
			for i := range g.Flows {
				g.Flows[i] = v + g.Flows[i]
			}
			m.Fairness = append(m.Fairness, g)
		}
		m.FairSkipped += a.FairSkipped
		m.Config.FairWindowNs = max(m.Config.FairWindowNs, a.Config.FairWindowNs)
		for _, s := range a.Throughput {
			s.Flow = v + s.Flow
			m.Throughput = append(m.Throughput, s)
		}
		for _, l := range a.Links {
			l.Capture = v + l.Capture
			m.Links = append(m.Links, l)
		}
		for _, q := range a.Queues {
			q.Port.Node = v + q.Port.Node
			m.Queues = append(m.Queues, q)
		}
		for _, t := range a.Traces {
			t.Sock = v + t.Sock
			m.Traces = append(m.Traces, t)
		}
		for _, r := range a.INT {
			r.Capture = v + r.Capture
			m.INT = append(m.INT, r)
		}
		for _, w := range a.Warnings {
			m.Warnings = append(m.Warnings, v+" "+w)
		}
		m.Fidelity = append(m.Fidelity, a.Fidelity...)
		m.Measures = append(m.Measures, a.Measures...)
		m.Interrupted = append(m.Interrupted, a.Interrupted...)
	}
	m.ByCC = tables(m.Flows, cfg)
	return m
}
