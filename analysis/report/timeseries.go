package report

import (
	"net/netip"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"cclab/analysis/metrics"
	"cclab/analysis/series"
)

// flowSeries is each flow's delivered rate per window, from its delivery
// capture.
func flowSeries(a *Analysis, tput *series.Windows[wkey]) []FlowSeries {
	var out []FlowSeries
	for _, f := range a.Flows {
		if !f.hasKey {
			continue
		}
		first, last, ok := tput.Span(f.key)
		if !ok {
			continue
		}
		pts := tput.Rate(f.key, first, last)
		for i := range pts {
			pts[i].T -= time.Duration(a.Origin)
		}
		out = append(out, FlowSeries{Flow: f.ID, CC: f.CC, Points: pts})
	}
	return out
}

// linkSeries is what each host sent per window, against its link rate.
func linkSeries(a *Analysis, links *series.Windows[lkey], in input, hosts map[netip.Addr]string, cfg Config) []LinkSeries {
	keys := links.Keys()
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].file != keys[j].file {
			return keys[i].file < keys[j].file
		}
		return keys[i].src.Less(keys[j].src)
	})
	var out []LinkSeries
	for _, k := range keys {
		first, last, ok := links.Span(k)
		if !ok {
			continue
		}
		ls := LinkSeries{Capture: filepath.Base(in.files[k.file]), Sender: k.src.String()}
		if h, ok := hosts[k.src]; ok {
			ls.Sender = h
			if _, l, ok := in.plan.HostPort(h); ok {
				ls.RateBps = l.Rate.BitsPerSecond()
			}
		} else if in.plan != nil {
			continue // a switch or foreign address: not a host link
		}
		if ls.RateBps == 0 {
			ls.RateBps = cfg.BottleneckBps
		}
		ls.Points = links.Rate(k, first, last)
		util := make([]float64, len(ls.Points))
		for i := range ls.Points {
			ls.Points[i].T -= time.Duration(a.Origin)
			if ls.RateBps > 0 {
				util[i] = ls.Points[i].V / float64(ls.RateBps)
			}
		}
		if ls.RateBps > 0 {
			ls.Utilisation = metrics.Summarize(util)
		}
		out = append(out, ls)
	}
	// A run captures every host port, so each host's sending shows up in
	// its peers' captures too: keep the sender's own capture
	// (<host>-<iface>.pcap) when the names say which that is.
	var own []LinkSeries
	for _, l := range out {
		if strings.HasPrefix(l.Capture, l.Sender+"-") {
			own = append(own, l)
		}
	}
	if len(own) > 0 {
		return own
	}
	return out
}

// intReports gathers the INT decoder's per-capture results.
func intReports(a *Analysis, dec *series.INT, files []string) []INTReport {
	var out []INTReport
	qs := dec.Queues()
	for fi, st := range dec.Stats {
		if st.Packets == 0 && st.Invalid == 0 {
			continue
		}
		r := INTReport{Capture: filepath.Base(files[fi]), Stats: st}
		for _, q := range qs {
			if q.File != fi {
				continue
			}
			for i := range q.Points {
				q.Points[i].T -= time.Duration(a.Origin)
			}
			r.Queues = append(r.Queues, q)
		}
		out = append(out, r)
	}
	return out
}
