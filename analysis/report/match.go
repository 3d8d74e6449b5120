package report

import (
	"fmt"
	"math"
	"net/netip"
	"path/filepath"
	"sort"
	"time"

	"cclab/analysis/pcapflows"
	"cclab/analysis/series"
	"cclab/topology"
)

// view is one connection, as seen by the capture that saw it first.
type view struct {
	file int
	flow *pcapflows.Flow
	// rx is the view where the data arrived last (the receiver's capture,
	// after the bottleneck): throughput and fairness are measured there.
	rxFile int
	rx     *pcapflows.Flow
}

// dedupe keeps one view per connection: a connection appears in the
// captures of both its hosts (and of switches); the capture with the
// earliest start is the initiator's own, closest to what it experienced.
func dedupe(caps []*pcapflows.Capture) []view {
	type tuple struct{ c, s netip.AddrPort }
	byTuple := map[tuple][]view{}
	var order []tuple
	for fi, c := range caps {
		for i := range c.Flows {
			f := &c.Flows[i]
			if f.Status == pcapflows.StatusNoData {
				continue
			}
			t := tuple{f.Client, f.Server}
			if _, ok := byTuple[t]; !ok {
				order = append(order, t)
			}
			vs := byTuple[t]
			merged := false
			for j := range vs {
				if overlaps(vs[j].flow, f) {
					if f.Start < vs[j].flow.Start {
						vs[j].file, vs[j].flow = fi, f
					}
					if f.FirstData > vs[j].rx.FirstData {
						vs[j].rxFile, vs[j].rx = fi, f
					}
					merged = true
					break
				}
			}
			if !merged {
				vs = append(vs, view{fi, f, fi, f})
			}
			byTuple[t] = vs
		}
	}
	var out []view
	for _, t := range order {
		out = append(out, byTuple[t]...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].flow.Start < out[j].flow.Start })
	return out
}

func lastOf(f *pcapflows.Flow) int64 { return max(f.End, f.LastData, f.Start) }

func overlaps(a, b *pcapflows.Flow) bool {
	return a.Start <= lastOf(b) && b.Start <= lastOf(a)
}

func fromPcap(v view, files []string, hosts map[netip.Addr]string) Flow {
	f := v.flow
	out := Flow{
		ID: fmt.Sprintf("%s#%d", filepath.Base(files[v.file]), f.ID), Client: f.Client, Server: f.Server,
		Src: hosts[f.Sender().Addr()], Dst: hosts[f.Receiver().Addr()],
		Size: f.Bytes, Status: string(f.Status), Complete: f.Status == pcapflows.StatusComplete,
		TimingSource: "pcap", Start: f.Start, End: f.End, FCT: f.FCT,
	}
	attachPcap(&out, v, files)
	if !out.Complete {
		out.End = 0
	}
	return out
}

func attachPcap(out *Flow, v view, files []string) {
	f := v.flow
	out.Capture = filepath.Base(files[v.file])
	out.PcapStatus, out.PcapFCT = string(f.Status), f.FCT
	out.Retransmits, out.RetransBytes = f.Retransmits, f.RetransBytes
	out.tkey = wkey{v.file, f.ID, f.DataFromClient}
	out.key, out.hasKey = wkey{v.rxFile, v.rx.ID, v.rx.DataFromClient}, true
	out.DeliveryCapture = filepath.Base(files[v.rxFile])
	out.active = series.Interval{Start: v.rx.Start, End: lastOf(v.rx)}
}

// fromApp takes flows.csv as the truth for timings and matches each row to
// its connection in the captures.
func fromApp(in input, views []view, a *Analysis) []Flow {
	type tuple struct{ c, s netip.AddrPort }
	byTuple := map[tuple][]view{}
	for _, v := range views {
		t := tuple{v.flow.Client, v.flow.Server}
		byTuple[t] = append(byTuple[t], v)
	}
	var out []Flow
	for _, af := range in.app {
		f := Flow{ID: af.ID, Src: af.Src, Dst: af.Dst, Client: af.SrcAddr, Server: af.DstAddr, Size: af.Size,
			CC: af.CC, Group: af.Group, Status: af.Status, TimingSource: "app"}
		if af.Status == "ok" && af.EndNs > af.StartNs {
			f.Complete = true
			f.Start, f.End = af.StartNs+in.offset, af.EndNs+in.offset
			f.FCT = time.Duration(af.EndNs - af.StartNs)
			if af.FCTNs != 0 && af.FCTNs != af.EndNs-af.StartNs {
				a.Warnings = append(a.Warnings, fmt.Sprintf("flows.csv line %d: fct_ns %d != end_ns - start_ns %d; using end - start", af.Line, af.FCTNs, af.EndNs-af.StartNs))
			}
		} else if af.StartNs != 0 {
			f.Start = af.StartNs + in.offset
		}
		f.Ideal = time.Duration(af.IdealFCTNs)
		cands := append(byTuple[tuple{af.SrcAddr, af.DstAddr}], byTuple[tuple{af.DstAddr, af.SrcAddr}]...)
		// Activity for throughput and fairness comes from the packets, the
		// same clock as the bytes it is compared with.
		if best, ok := nearest(cands, f.Start); ok {
			attachPcap(&f, best, in.files)
			arrivalEnd(&f, best)
		}
		out = append(out, f)
	}
	return out
}

// arrivalEnd ends a flows.csv flow when its last byte arrived at the
// receiver (the receiver's capture), not when the receiver's reader got
// it: the papers' FCT runs from the flow's start to the last packet's
// arrival, and the reader's wake-up is the measuring tool's own latency
// (4-5 ms, up to 50 ms, for one flow in ten on this 2-core machine under
// load). The start stays the application's connect(), before the host's
// NIC queue, which is part of the flow's time.
func arrivalEnd(f *Flow, v view) {
	// Only a capture of its own at the receiver's end says when bytes
	// arrived there (with only the sender's, keep the application's end).
	if !f.Complete || v.rx == nil || v.rxFile == v.file || v.rx.Status != pcapflows.StatusComplete ||
		v.rx.LastUseful <= f.Start || v.rx.Bytes != f.Size {
		return
	}
	f.AppEnd = f.End
	f.End = v.rx.LastUseful
	f.FCT = time.Duration(f.End - f.Start)
	f.TimingSource = "app+rx"
}

// nearest picks the candidate connection starting closest to start.
func nearest(cands []view, start int64) (view, bool) {
	best, bestD := view{}, int64(math.MaxInt64)
	for _, v := range cands {
		d := v.flow.Start - start
		if d < 0 {
			d = -d
		}
		if start == 0 {
			d = 0
		}
		if d < bestD {
			best, bestD = v, d
		}
	}
	return best, bestD != math.MaxInt64
}

// crossCheck compares the application's timings with the packets', each
// against the same event seen from both sides:
//   - the end: the receiver read the last byte (flows.csv) and the last
//     missing byte arrived (the receiver's capture, LastUseful): apart by
//     at most mismatchTolerance. (The sender's capture ends a flow at the
//     ACK of the last byte, half an RTT and maybe a delayed ACK later: set
//     against the receiver's read it flagged most healthy flows.)
//   - the start: connect() (flows.csv) and the SYN in the sender's
//     capture, which is taken after the host's NIC queue: the SYN may
//     wait there up to the queue's drain time, so the window is
//     [-tolerance, drain + tolerance].
//
// Flows not finished in the captures, or whose bytes differ, are
// mismatches too.
func crossCheck(a *Analysis, in input, caps []*pcapflows.Capture) {
	if !in.hasApp || len(in.files) == 0 {
		return
	}
	drain := hostQueueDrain(in.plan)
	for _, f := range a.Flows {
		if !f.Complete {
			continue
		}
		appEnd := f.End
		if f.AppEnd != 0 {
			appEnd = f.AppEnd
		}
		m := Mismatch{Flow: f.ID, AppFCT: time.Duration(appEnd - f.Start), PcapFCT: f.PcapFCT, RTT: f.BaseRTT}
		switch {
		case !f.hasKey:
			m.Reason = "finished in flows.csv, not found in any capture"
		case f.PcapStatus != string(pcapflows.StatusComplete):
			m.Reason = "finished in flows.csv, " + f.PcapStatus + " in " + f.Capture
		default:
			tx := caps[f.tkey.file].Flows[f.tkey.flow]
			rx := caps[f.key.file].Flows[f.key.flow]
			m.StartDelta = time.Duration(tx.Start - f.Start)
			m.EndDelta = time.Duration(rx.LastUseful - appEnd)
			if tx.Bytes != f.Size {
				m.Reason = fmt.Sprintf("flows.csv says %d bytes, the capture %d", f.Size, tx.Bytes)
				break
			}
			tol := mismatchTolerance(f.BaseRTT)
			if tol == 0 {
				continue
			}
			wait := drain[f.Src]
			switch {
			case m.StartDelta < -tol || m.StartDelta > wait+tol:
				m.Reason = fmt.Sprintf("SYN %v after connect (in %s), outside [-%v, %v]", m.StartDelta, f.Capture, tol, wait+tol)
			case m.EndDelta < -tol || m.EndDelta > tol:
				m.Reason = fmt.Sprintf("last byte arrived %v from the receiver's read (in %s), more than %v apart", m.EndDelta, f.DeliveryCapture, tol)
			default:
				continue
			}
		}
		a.Mismatches = append(a.Mismatches, m)
	}
}

// mismatchTolerance is how far the application's and the packets' view of
// one event may be apart: a quarter of the flow's base RTT (the
// calibrated path's in a run), at least 1 ms (a reader's wake-up on a
// loaded 2-core machine). 0 without a base RTT: nothing to judge against.
func mismatchTolerance(rtt time.Duration) time.Duration {
	if rtt <= 0 {
		return 0
	}
	return max(rtt/4, time.Millisecond)
}

// hostQueueDrain is, per host, the time its NIC queue takes to drain when
// full: what a SYN may wait between connect() and the capture.
func hostQueueDrain(p *topology.Plan) map[string]time.Duration {
	out := map[string]time.Duration{}
	if p == nil {
		return out
	}
	host := map[string]bool{}
	for _, n := range p.Hosts() {
		host[n.Name] = true
	}
	for _, l := range p.Links {
		buf := l.HostBuffer
		if buf == 0 {
			buf = l.Buffer
		}
		bps := l.Rate.BitsPerSecond()
		if bps == 0 {
			continue
		}
		d := time.Duration(float64(buf) * 8 / float64(bps) * 1e9)
		for _, end := range []string{l.A.Node, l.B.Node} {
			if host[end] {
				out[end] = max(out[end], d)
			}
		}
	}
	return out
}
