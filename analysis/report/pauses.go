package report

import (
	"fmt"
	"sort"
	"time"

	"cclab/analysis/plot"
	"cclab/rundir"
)

// PortPauses is one port's pauses in a lossless run (pfc.csv): the
// egress paused, the ingress that paused it, and each pause from when it
// was in force to its resume, from the analysis's origin.
type PortPauses struct {
	Port   string       `json:"port"`
	By     string       `json:"paused_by"`
	Pauses []PauseSpell `json:"pauses"`
}

// PauseSpell is one pause: in force from Start to End.
type PauseSpell struct {
	Start time.Duration `json:"start_ns"`
	End   time.Duration `json:"end_ns"`
}

// pausesOf turns pfc.csv's rows (CLOCK_MONOTONIC) into each paused port's
// spells on the capture clock (offset: realtime less monotonic) from
// origin. A pause without its resume (the table cut short) is dropped.
func pausesOf(rows []rundir.PFCChange, offset, origin int64) []PortPauses {
	byPort := map[string]*PortPauses{}
	open := map[string]int64{}
	var order []string
	for _, r := range rows {
		k := r.Node + "/" + r.Iface
		p := byPort[k]
		if p == nil {
			p = &PortPauses{Port: k, By: r.PeerNode + "/" + r.PeerIface}
			byPort[k] = p
			order = append(order, k)
		}
		t := time.Duration(r.TimeNs + offset - origin)
		if r.Event == rundir.PFCPause {
			open[k] = int64(t)
			continue
		}
		if start, ok := open[k]; ok {
			p.Pauses = append(p.Pauses, PauseSpell{Start: time.Duration(start), End: t})
			delete(open, k)
		}
	}
	out := make([]PortPauses, 0, len(order))
	for _, k := range order {
		out = append(out, *byPort[k])
	}
	sort.SliceStable(out, func(i, j int) bool { return pausedFor(out[i]) > pausedFor(out[j]) })
	return out
}

func pausedFor(p PortPauses) time.Duration {
	var d time.Duration
	for _, s := range p.Pauses {
		d += s.End - s.Start
	}
	return d
}

// pauseChart draws the pause timeline: one row per paused port (the
// longest paused at the bottom, at most maxLines), high while paused.
func (a *Analysis) pauseChart() plot.Chart {
	c := plot.Chart{Title: "PFC pauses: each port's row is raised while the port is paused", XLabel: "time (ms)", YLabel: "paused port (row)", XFromZero: true, YFromZero: true}
	for i, p := range a.Pauses {
		if i == maxLines {
			break
		}
		base := float64(i)
		s := plot.Series{Name: fmt.Sprintf("%s (by %s, %d pauses, %v)", p.Port, p.By, len(p.Pauses), pausedFor(p).Round(time.Millisecond)), Color: i + 1, Step: true}
		s.X, s.Y = append(s.X, 0), append(s.Y, base)
		for _, sp := range p.Pauses {
			s.X = append(s.X, ms(sp.Start), ms(sp.End))
			s.Y = append(s.Y, base+0.8, base)
		}
		c.Series = append(c.Series, s)
	}
	return c
}
