package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cclab/analysis/pcapflows"
	"cclab/analysis/report"
	"cclab/orchestrator/fidelity"
	"cclab/rundir"
	"cclab/tcopt/intswitch"
)

// losslessRunJSON is what the lossless tests read of a variant's run.json.
type losslessRunJSON struct {
	Fidelity   fidelity.Verdict `json:"fidelity"`
	Extensions struct {
		PFC    *PFCJSON `json:"pfc"`
		Switch struct {
			Ports []intswitch.PortStats `json:"ports"`
		} `json:"switch"`
	} `json:"extensions"`
}

func readLosslessRun(t *testing.T, dir string) losslessRunJSON {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rundir.RunJSON))
	if err != nil {
		t.Fatal(err)
	}
	var rj losslessRunJSON
	if err := json.Unmarshal(b, &rj); err != nil {
		t.Fatal(err)
	}
	return rj
}

// retransmits counts the data segments of the workload's flows the
// analysis saw sent again (its flows matched to flows.csv).
func retransmits(t *testing.T, dir string) uint64 {
	t.Helper()
	a, err := report.AnalyzeRun(context.Background(), dir, report.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, f := range a.Flows {
		n += f.Retransmits
	}
	return n
}

// connEnds is one connection as the captures at its two hosts saw it: the
// data segments each saw (first copies and retransmissions; the lossless
// experiment's hosts segment nothing late: no TSO, GSO or GRO) and when
// each saw the first SYN.
type connEnds struct {
	name  string
	files [2]string
	segs  [2]uint64
	syn   [2]int64
}

// bothEnds returns every connection seen in two of the run's host captures.
func bothEnds(t *testing.T, dir string) []connEnds {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "pcap", "*.pcap"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures in %s: %v", dir, err)
	}
	type tuple struct{ c, s netip.AddrPort }
	seen := map[tuple][]pcapflows.Flow{}
	where := map[tuple][]string{}
	for _, f := range files {
		c, err := pcapflows.ReadFile(context.Background(), f, pcapflows.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if c.Cut != nil {
			t.Fatalf("capture %s cut: %v", f, c.Cut)
		}
		for _, fl := range c.Flows {
			k := tuple{fl.Client, fl.Server}
			seen[k] = append(seen[k], fl)
			where[k] = append(where[k], filepath.Base(f))
		}
	}
	var out []connEnds
	for k, fl := range seen {
		if len(fl) != 2 || !fl[0].HandshakeSeen || !fl[1].HandshakeSeen {
			continue
		}
		out = append(out, connEnds{
			name:  fmt.Sprintf("%v -> %v", k.c, k.s),
			files: [2]string{where[k][0], where[k][1]},
			segs:  [2]uint64{fl[0].DataPackets, fl[1].DataPackets},
			syn:   [2]int64{fl[0].Start, fl[1].Start},
		})
	}
	if len(out) == 0 {
		t.Fatalf("no connection seen at both its ends in %s", dir)
	}
	return out
}

// lostInFabric compares, for every connection seen at both its hosts, the
// data segments its sender's interface put on the wire with those that
// reached the receiver's, and returns one line per connection whose
// segments did not all arrive. A retransmission that arrived along with its
// original (a tail-loss probe during a long pause) is no loss.
func lostInFabric(t *testing.T, dir string) []string {
	t.Helper()
	var lost []string
	for _, c := range bothEnds(t, dir) {
		if c.segs[0] != c.segs[1] {
			lost = append(lost, fmt.Sprintf("%s: %d data segments in %s, %d in %s", c.name, c.segs[0], c.files[0], c.segs[1], c.files[1]))
		}
	}
	return lost
}

// check finds a verdict's check by name.
func check(v fidelity.Verdict, name string) (fidelity.Check, bool) {
	for _, c := range v.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return fidelity.Check{}, false
}

// TestLosslessIncast: experiments/lossless-incast.yaml, a 7:1 incast of
// 1 MB per sender on a link-placed leaf-spine (1 ms links, 100 Mbit/s,
// static Xoff 30 KB, the model's headroom), with cubic and DCTCP. Lossless:
// no port's qdisc dropped and every data segment a sender's interface sent
// reached the receiver's (a pause longer than the tail-loss probe's timer
// makes TCP send a segment twice; both copies must arrive); the receiver's
// leaf paused its upstreams, the spine (paused, filling) paused leaf l1,
// and pauses reached hosts' NICs (with cubic: a spread of at least two
// hops); the verdict's lossless checks ran and `lossless` held. The same incast
// without pfc (cubic) drops at the receiver's port: the control that the
// incast is one that loses packets.
func TestLosslessIncast(t *testing.T) {
	src, err := os.ReadFile("../../experiments/lossless-incast.yaml")
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Replace(string(src), "topology: ../topologies/lossless-leafspine.yaml\n", "", 1)
	body = strings.Replace(body, "name: lossless-incast\n", "", 1)
	if body == string(src) {
		t.Fatal("the experiment file no longer names its topology as the test expects")
	}
	res, _ := runExperiment(t, writeExperiment(t, "lossless-leafspine.yaml", body))
	for _, s := range res.Runs {
		rj := readLosslessRun(t, s.Dir)
		p := rj.Extensions.PFC
		if p == nil {
			t.Fatalf("%s: run.json has no extensions.pfc", s.CC)
		}
		t.Logf("%s: %d pauses, paused %d ns in all, longest %d ns, spread %d hops; apply lateness n %d p50 %d ns p99 %d ns max %d ns; qdisc drops %v; verdict %s",
			s.CC, p.Pauses, p.PausedNs, p.LongestPauseNs, p.MaxSpreadHops, p.Lateness.N, p.Lateness.P50Ns, p.Lateness.P99Ns, p.Lateness.MaxNs, p.QdiscDrops, rj.Fidelity.String())
		for _, port := range p.Ports {
			t.Logf("  paused %s/%s (by %s/%s): %d pauses, %d ns, longest %d ns, hops %d", port.Node, port.Iface, port.PeerNode, port.PeerIface, port.Pauses, port.PausedNs, port.LongestPauseNs, port.MaxSpreadHops)
		}
		if s.OK != s.Flows || s.Flows != 7 {
			t.Errorf("%s: %d of %d flows ok, want 7 of 7", s.CC, s.OK, s.Flows)
		}
		if len(p.QdiscDrops) != 0 {
			t.Errorf("%s: lossless run dropped at %v", s.CC, p.QdiscDrops)
		}
		if lost := lostInFabric(t, s.Dir); len(lost) != 0 {
			t.Errorf("%s: segments lost between the hosts' interfaces in a lossless run:\n%s", s.CC, strings.Join(lost, "\n"))
		}
		a, err := report.AnalyzeRun(context.Background(), s.Dir, report.Config{})
		if err != nil {
			t.Fatal(err)
		}
		var spells int
		for _, pp := range a.Pauses {
			spells += len(pp.Pauses)
		}
		if len(a.Pauses) != len(p.Ports) || spells != p.Pauses {
			t.Errorf("%s: the analysis's pause timeline has %d ports and %d pauses, run.json %d and %d", s.CC, len(a.Pauses), spells, len(p.Ports), p.Pauses)
		}
		t.Logf("%s: %d segments retransmitted", s.CC, retransmits(t, s.Dir))
		// Each capture shows a packet where the host gets it: after the
		// last link's delay (the line hands it back to the port), so a
		// SYN crosses at least two 1 ms links between the two captures.
		var least time.Duration
		for i, c := range bothEnds(t, s.Dir) {
			d := time.Duration(abs(c.syn[1] - c.syn[0]))
			if i == 0 || d < least {
				least = d
			}
			if d < 2*time.Millisecond {
				t.Errorf("%s: %s: the SYN is %v apart in %s and %s, want at least the two links' 2 ms", s.CC, c.name, d, c.files[0], c.files[1])
			}
		}
		t.Logf("%s: the closest hosts' captures see a SYN %v apart", s.CC, least)
		paused := map[string]bool{}
		for _, port := range p.Ports {
			paused[port.Node+"/"+port.Iface] = port.Pauses > 0
		}
		if p.Pauses == 0 || !paused["s0/l0"] {
			t.Errorf("%s: %d pauses, the spine's port to l0 paused: %v", s.CC, p.Pauses, paused["s0/l0"])
		}
		// Cubic fills the spine's queue to l0; DCTCP's marks keep it
		// below Xoff, so its pauses need not spread.
		if s.CC == "cubic" && (p.MaxSpreadHops < 2 || !paused["l1/s0"]) {
			t.Errorf("%s: spread %d hops, l1's port to the spine paused: %v; want the pause propagated upstream", s.CC, p.MaxSpreadHops, paused["l1/s0"])
		}
		if c, ok := check(rj.Fidelity, "lossless"); !ok || !c.OK {
			t.Errorf("%s: the lossless check: %+v (present %v)", s.CC, c, ok)
		}
		checkPFCTimeline(t, s.CC, s.Dir, p)
		for _, name := range []string{"pfc events", "pfc headroom", "pfc apply lateness p50", "pfc apply lateness p99"} {
			if _, ok := check(rj.Fidelity, name); !ok {
				t.Errorf("%s: the verdict has no %q check", s.CC, name)
			}
		}
	}

	// The control: the same incast, lossy.
	lossy := strings.Replace(body, "  pfc: {mode: static, xoff: 30KB, buffer: 1MB, headroom: auto}\n", "", 1)
	lossy = strings.Replace(lossy, "compare: [cubic, dctcp]\n", "compare: [cubic]\n", 1)
	if lossy == body {
		t.Fatal("the experiment file's pfc line is not the one the test removes")
	}
	res, _ = runExperiment(t, writeExperiment(t, "lossless-leafspine.yaml", lossy))
	if len(res.Runs) != 1 {
		t.Fatalf("lossy control: %d runs", len(res.Runs))
	}
	rj := readLosslessRun(t, res.Runs[0].Dir)
	if rj.Extensions.PFC != nil {
		t.Error("a lossy run recorded extensions.pfc")
	}
	var dropped uint64
	for _, ps := range rj.Extensions.Switch.Ports {
		dropped += ps.DroppedPkts
	}
	t.Logf("lossy control: %d packets dropped at switch ports, %d segments retransmitted", dropped, retransmits(t, res.Runs[0].Dir))
	if dropped == 0 {
		t.Error("the lossy control dropped nothing: the incast does not test losslessness")
	}
	if lost := lostInFabric(t, res.Runs[0].Dir); len(lost) == 0 {
		t.Error("the lossy control's captures show every segment sent arriving: the comparison cannot see a loss")
	} else {
		t.Logf("lossy control: %d connections lost segments between the hosts' interfaces", len(lost))
	}
}

// A lossless experiment is refused before anything is built on a
// path-placed topology, and with a link event that changes a rate, each
// with the pfc section's or the event's line.
func TestPrepareRefusesLossless(t *testing.T) {
	const wl = "workload:\n  - name: l\n    long: {src: h1, dst: h0, stop: 1s}\n"
	for _, c := range []struct{ topo, body, want string }{
		{"repro-star-2-1ms.yaml", "switch:\n  pfc: {mode: static, xoff: 30KB}\n" + wl,
			"exp.yaml:4: switch pfc: topology repro-star-2-1ms holds each path's whole delay at its last switch port (placement \"path\"); a lossless fabric needs each link to hold its own"},
		{"lossless-leafspine.yaml", "switch:\n  pfc: {mode: static, xoff: 30KB}\nevents:\n  - {at: 1s, link: l0:s0, rate: 50Mbit}\n" + wl,
			"exp.yaml:6: switch pfc: link event at 1s changes a rate or buffer"},
	} {
		_, err := Prepare(writeExperiment(t, c.topo, c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Prepare: %v, want %q", c.topo, err, c.want)
		}
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// checkPFCTimeline reads the run's pfc.csv: per paused port, pauses and
// resumes alternate from a pause to a resume, as many pauses as run.json
// counts and the same paused time; every change was due the links' 1 ms
// after its crossing.
func checkPFCTimeline(t *testing.T, cc, dir string, p *PFCJSON) {
	t.Helper()
	rows, err := rundir.ReadPFCChanges(dir)
	if err != nil || rows == nil {
		t.Fatalf("%s: pfc.csv: %v (rows %v)", cc, err, rows)
	}
	type acct struct {
		pauses  int
		paused  int64
		since   int64
		pausing bool
	}
	ports := map[string]*acct{}
	for _, r := range rows {
		k := r.Node + "/" + r.Iface
		a := ports[k]
		if a == nil {
			a = &acct{}
			ports[k] = a
		}
		if r.Event != rundir.PFCResumeAtStop && r.DueNs-r.CrossingNs != int64(time.Millisecond) {
			t.Errorf("%s: pfc.csv line %d: due %d ns after the crossing, want the link's 1 ms", cc, r.Line, r.DueNs-r.CrossingNs)
		}
		switch {
		case r.Event == rundir.PFCPause && !a.pausing:
			a.pauses++
			a.since, a.pausing = r.TimeNs, true
		case r.Event != rundir.PFCPause && a.pausing:
			a.paused += r.TimeNs - a.since
			a.pausing = false
		default:
			t.Errorf("%s: pfc.csv line %d: %s of %s while paused %v", cc, r.Line, r.Event, k, a.pausing)
		}
	}
	n := 0
	for _, port := range p.Ports {
		a := ports[port.Node+"/"+port.Iface]
		if a == nil || a.pausing || a.pauses != port.Pauses || a.paused != port.PausedNs {
			t.Errorf("%s: %s/%s: pfc.csv gives %+v, run.json %d pauses, %d ns", cc, port.Node, port.Iface, a, port.Pauses, port.PausedNs)
		}
		n += port.Pauses
	}
	if len(ports) != len(p.Ports) || n != p.Pauses {
		t.Errorf("%s: pfc.csv pauses %d ports, run.json %d (%d pauses of %d)", cc, len(ports), len(p.Ports), n, p.Pauses)
	}
	t.Logf("%s: pfc.csv holds %d changes", cc, len(rows))
}
