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
// origin. A row out of turn (a pause of a paused port, a resume of one not
// paused, a pause never resumed) is left out and named in the warnings.
func pausesOf(rows []rundir.PFCChange, offset, origin int64) ([]PortPauses, []string) {
	at := func(ns int64) time.Duration { return time.Duration(ns + offset - origin) }
	byPort := map[string]*PortPauses{}
	open := map[string]rundir.PFCChange{}
	var order, warn []string
	for _, r := range rows {
		k := r.Node + "/" + r.Iface
		if r.Event == rundir.PFCPause {
			if o, ok := open[k]; ok {
				warn = append(warn, fmt.Sprintf("pfc.csv:%d: a pause of %s, paused since line %d", r.Line, k, o.Line))
			}
			open[k] = r
			continue
		}
		o, ok := open[k]
		if !ok {
			warn = append(warn, fmt.Sprintf("pfc.csv:%d: a resume of %s, which was not paused", r.Line, k))
			continue
		}
		delete(open, k)
		p := byPort[k]
		if p == nil {
			p = &PortPauses{Port: k, By: r.PeerNode + "/" + r.PeerIface}
			byPort[k] = p
			order = append(order, k)
		}
		p.Pauses = append(p.Pauses, PauseSpell{Start: at(o.TimeNs), End: at(r.TimeNs)})
	}
	for k, o := range open {
		warn = append(warn, fmt.Sprintf("pfc.csv:%d: %s paused and never resumed", o.Line, k))
	}
	sort.Strings(warn)
	out := make([]PortPauses, 0, len(order))
	for _, k := range order {
		out = append(out, *byPort[k])
	}
	sort.SliceStable(out, func(i, j int) bool { return pausedFor(out[i]) > pausedFor(out[j]) })
	return out, warn
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

// pfcLines are a lossless run's pauses on screen, one line (run.json
// extensions.pfc; nothing for a lossy run).
func pfcLines(a *Analysis) []string {
	p := a.PFC
	if p == nil {
		return nil
	}
	ports, hosts := 0, 0
	for _, port := range p.Ports {
		if port.Pauses == 0 {
			continue
		}
		ports++
		if port.Host {
			hosts++
		}
	}
	return []string{fmt.Sprintf("PFC: %d pauses on %d ports (%d host NICs), paused %v in all, the longest %v, spread %d hops; the timeline in pfc.csv and the pfc_pauses figure",
		p.Pauses, ports, hosts, time.Duration(p.PausedNs).Round(time.Microsecond), time.Duration(p.LongestPauseNs).Round(time.Microsecond), p.MaxSpreadHops)}
}
