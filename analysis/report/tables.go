package report

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"cclab/analysis/metrics"
)

// Table is a table rendered to CSV, Markdown and HTML alike.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
	// Stream, when set, produces the rows instead of Rows, so long series
	// go to disk without being held as strings.
	Stream func(emit func([]string) error) error
}

func num(v metrics.Num) string {
	f := v.F()
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return ""
	}
	return strconv.FormatFloat(f, 'g', 6, 64)
}

func dur(d time.Duration) string { return strconv.FormatInt(int64(d), 10) }

func summaryCells(s metrics.Summary) []string {
	return []string{strconv.Itoa(s.N), num(s.Mean), num(s.P50), num(s.P95), num(s.P99), num(s.P999), num(s.Max)}
}

var summaryHeader = []string{"n", "mean", "p50", "p95", "p99", "p99.9", "max"}

// FlowTable is one row per flow.
func (a *Analysis) FlowTable() Table {
	t := Table{Title: "flows", Header: []string{"id", "src", "dst", "client", "server", "size_bytes", "cc", "group", "status", "complete",
		"timing_source", "start_ns", "end_ns", "fct_ns", "ideal_fct_ns", "slowdown", "base_rtt_ns", "bottleneck", "capture",
		"delivery_capture", "pcap_status", "pcap_fct_ns", "retransmits", "retrans_bytes"}}
	t.Stream = func(emit func([]string) error) error {
		for _, f := range a.Flows {
			start, end := "", ""
			if f.Start > 0 {
				start = strconv.FormatInt(f.Start-a.Origin, 10)
			}
			if f.End > 0 {
				end = strconv.FormatInt(f.End-a.Origin, 10)
			}
			if err := emit([]string{f.ID, f.Src, f.Dst, f.Client.String(), f.Server.String(), strconv.FormatUint(f.Size, 10),
				f.CC, f.Group, f.Status, strconv.FormatBool(f.Complete), f.TimingSource, start, end, dur(f.FCT), dur(f.Ideal),
				num(f.Slowdown), dur(f.BaseRTT), f.Bottleneck, f.Capture, f.DeliveryCapture, f.PcapStatus, dur(f.PcapFCT),
				strconv.FormatUint(f.Retransmits, 10), strconv.FormatUint(f.RetransBytes, 10)}); err != nil {
				return err
			}
		}
		return nil
	}
	return t
}

// BinTable is the slowdown per size bin of every congestion control.
func (a *Analysis) BinTable(equal bool) Table {
	t := Table{Title: "slowdown per size bin (fixed edges)", Header: append([]string{"cc", "bin", "low_bytes", "high_bytes"}, summaryHeader...)}
	if equal {
		t.Title = fmt.Sprintf("slowdown per size bin (equal count, %g%% of flows each)", a.Config.EqualPct)
	}
	for _, c := range a.ByCC {
		bins := c.FixedBins
		if equal {
			bins = c.EqualBins
		}
		for _, b := range bins {
			high := strconv.FormatUint(b.High, 10)
			if b.High == math.MaxUint64 {
				high = ""
			}
			t.Rows = append(t.Rows, append([]string{c.CC, b.Label, strconv.FormatUint(b.Low, 10), high}, summaryCells(b.Summary)...))
		}
	}
	return t
}

// ClassTable is the slowdown of all, short and long flows per law.
func (a *Analysis) ClassTable() Table {
	t := Table{Title: fmt.Sprintf("slowdown: all flows, short (< %s), long (>= %s)",
		metrics.SizeLabel(a.Config.Classes.ShortBelow), metrics.SizeLabel(a.Config.Classes.LongAtLeast)),
		Header: append([]string{"cc", "class"}, summaryHeader...)}
	for _, c := range a.ByCC {
		for _, k := range []struct {
			name string
			s    metrics.Summary
		}{{"all", c.Slowdown.All}, {"short", c.Slowdown.Short}, {"long", c.Slowdown.Long}} {
			t.Rows = append(t.Rows, append([]string{c.CC, k.name}, summaryCells(k.s)...))
		}
	}
	return t
}

// SideBySide puts the laws next to each other: p99 slowdown per fixed bin.
func (a *Analysis) SideBySide() Table {
	t := Table{Title: "p99 slowdown per flow size, side by side", Header: []string{"bin"}}
	for _, c := range a.ByCC {
		t.Header = append(t.Header, c.CC+" p99 (n)")
	}
	if len(a.ByCC) == 0 {
		return t
	}
	for i, b := range a.ByCC[0].FixedBins {
		row := []string{b.Label}
		any := false
		for _, c := range a.ByCC {
			if i >= len(c.FixedBins) || c.FixedBins[i].Summary.N == 0 {
				row = append(row, "")
				continue
			}
			s := c.FixedBins[i].Summary
			row = append(row, fmt.Sprintf("%s (%d)", fmtF(s.P99.F()), s.N))
			any = true
		}
		if any {
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

// FairnessTable summarises each bottleneck's fairness.
func (a *Analysis) FairnessTable() Table {
	t := Table{Title: fmt.Sprintf("fairness where defined (2+ flows sharing a bottleneck unchanged for %d base RTTs; Jain >= %g held %v, windows of %v)",
		a.Config.FairOverlapRTTs, a.Config.FairThreshold, time.Duration(a.Config.FairHoldNs), time.Duration(a.Config.FairWindowNs)),
		Header: []string{"bottleneck", "flows", "windows", "mean_index", "first_fair_ms", "changes", "converged", "median_convergence_ms", "max_convergence_ms"}}
	for _, g := range a.Fairness {
		var sum float64
		var n int
		for _, p := range g.Jain {
			if !math.IsNaN(p.Index.F()) {
				sum += p.Index.F()
				n++
			}
		}
		mean := metrics.Num(math.NaN())
		if n > 0 {
			mean = metrics.Num(sum / float64(n))
		}
		first := ""
		if g.FirstFair >= 0 {
			first = fmtF(ms(g.FirstFair))
		}
		var conv []float64
		for _, c := range g.Convergence {
			if c.Converged {
				conv = append(conv, ms(c.After))
			}
		}
		cs := metrics.Summarize(conv)
		t.Rows = append(t.Rows, []string{g.Bottleneck, strconv.Itoa(len(g.Flows)), strconv.Itoa(len(g.Jain)), num(mean), first,
			strconv.Itoa(len(g.Convergence)), strconv.Itoa(len(conv)), num(cs.P50), num(cs.Max)})
	}
	return t
}

// JainTable is every fairness point.
func (a *Analysis) JainTable() Table {
	t := Table{Title: "jain", Header: []string{"bottleneck", "t_ns", "flows", "index"}}
	t.Stream = func(emit func([]string) error) error {
		for _, g := range a.Fairness {
			for _, p := range g.Jain {
				if err := emit([]string{g.Bottleneck, dur(p.T), strconv.Itoa(p.Flows), num(p.Index)}); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return t
}

// ConvergenceTable lists time to fairness after every change of the set
// of active flows.
func (a *Analysis) ConvergenceTable() Table {
	t := Table{Title: "convergence", Header: []string{"bottleneck", "at_ns", "flows", "converged", "after_ns"}}
	t.Stream = func(emit func([]string) error) error {
		for _, g := range a.Fairness {
			for _, c := range g.Convergence {
				after := ""
				if c.Converged {
					after = dur(c.After)
				}
				if err := emit([]string{g.Bottleneck, dur(c.At), strconv.Itoa(c.Flows), strconv.FormatBool(c.Converged), after}); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return t
}

// ThroughputTable is every flow's rate per window.
func (a *Analysis) ThroughputTable() Table {
	t := Table{Title: "throughput", Header: []string{"flow", "cc", "t_ns", "bps"}}
	t.Stream = func(emit func([]string) error) error {
		for _, s := range a.Throughput {
			for _, p := range s.Points {
				if err := emit([]string{s.Flow, s.CC, dur(p.T), strconv.FormatFloat(p.V, 'f', 0, 64)}); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return t
}

// LinkTable is what each host sent per window, with utilisation.
func (a *Analysis) LinkTable() Table {
	t := Table{Title: "links", Header: []string{"capture", "sender", "rate_bps", "t_ns", "bps", "utilisation"}}
	t.Stream = func(emit func([]string) error) error {
		for _, l := range a.Links {
			for _, p := range l.Points {
				u := ""
				if l.RateBps > 0 {
					u = strconv.FormatFloat(p.V/float64(l.RateBps), 'f', 4, 64)
				}
				if err := emit([]string{l.Capture, l.Sender, strconv.FormatUint(l.RateBps, 10), dur(p.T), strconv.FormatFloat(p.V, 'f', 0, 64), u}); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return t
}

// QueueTable summarises each switch port's queue.
func (a *Analysis) QueueTable() Table {
	t := Table{Title: "queue length per port (bytes)", Header: append([]string{"port"}, summaryHeader...)}
	for _, q := range a.Queues {
		t.Rows = append(t.Rows, append([]string{q.Port.String()}, summaryCells(q.Summary)...))
	}
	return t
}

// MismatchTable lists disagreements between flows.csv and the captures.
func (a *Analysis) MismatchTable() Table {
	t := Table{Title: "application vs capture timings", Header: []string{"flow", "reason", "app_fct_ns", "pcap_fct_ns", "start_delta_ns", "end_delta_ns", "base_rtt_ns"}}
	for _, m := range a.Mismatches {
		t.Rows = append(t.Rows, []string{m.Flow, m.Reason, dur(m.AppFCT), dur(m.PcapFCT), dur(m.StartDelta), dur(m.EndDelta), dur(m.RTT)})
	}
	return t
}

// INTTable summarises the INT options of each capture.
func (a *Analysis) INTTable() Table {
	t := Table{Title: "INT options in the captures (tcopt/README.md); queue = largest per window",
		Header: []string{"capture", "packets", "forward", "echo", "invalid", "overflow", "records", "ignored", "qcn", "direction", "hop", "windows", "qlen_p50", "qlen_p99", "qlen_max"}}
	for _, r := range a.INT {
		st := r.Stats
		head := []string{r.Capture, strconv.FormatUint(st.Packets, 10), strconv.FormatUint(st.Forward, 10), strconv.FormatUint(st.Echo, 10),
			strconv.FormatUint(st.Invalid, 10), strconv.FormatUint(st.Overflow, 10), strconv.FormatUint(st.Records, 10), strconv.FormatUint(st.Ignored, 10), strconv.FormatUint(st.QCN, 10)}
		if len(r.Queues) == 0 {
			t.Rows = append(t.Rows, append(head, "", "", "", "", "", ""))
		}
		for _, q := range r.Queues {
			dir := "forward"
			if q.Echo {
				dir = "echo"
			}
			t.Rows = append(t.Rows, append(append([]string(nil), head...), dir, strconv.Itoa(q.Hop), strconv.Itoa(q.Summary.N),
				num(q.Summary.P50), num(q.Summary.P99), num(q.Summary.Max)))
		}
	}
	return t
}

// INTSeriesTable is every per-window INT queue maximum.
func (a *Analysis) INTSeriesTable() Table {
	t := Table{Title: "int", Header: []string{"capture", "direction", "hop", "t_ns", "max_qlen_bytes"}}
	for _, r := range a.INT {
		for _, q := range r.Queues {
			dir := "forward"
			if q.Echo {
				dir = "echo"
			}
			for _, p := range q.Points {
				t.Rows = append(t.Rows, []string{r.Capture, dir, strconv.Itoa(q.Hop), dur(p.T), strconv.FormatFloat(p.V, 'f', 0, 64)})
			}
		}
	}
	return t
}
