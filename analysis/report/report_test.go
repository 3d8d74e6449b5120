package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cclab/analysis/pcapflows"
	synth "cclab/internal/pcapsynth"
	"cclab/internal/units"
	"cclab/rundir"
	"cclab/tcopt"
	"cclab/topology"
	"cclab/topology/ideal"
)

var (
	h0 = [4]byte{10, 0, 0, 1}
	h1 = [4]byte{10, 0, 0, 2}
	h2 = [4]byte{10, 0, 0, 3}
)

// dumbbell: h0 and h1 send to h2 through s0; every link 1 Gbit/s, 2 us.
func dumbbell() *topology.Plan {
	ap := func(s string) netip.Addr { return netip.MustParseAddr(s) }
	link := func(a, b string) topology.Link {
		return topology.Link{A: topology.Port{Node: a, Iface: "eth0"}, B: topology.Port{Node: b, Iface: "p-" + a},
			Rate: units.Rate(1e9), Buffer: 100_000, Delay: units.Duration(2 * time.Microsecond)}
	}
	return &topology.Plan{Name: "dumbbell", Kind: "dumbbell",
		Nodes: []topology.Node{{Name: "h0", Role: topology.Host, Addr: ap("10.0.0.1")}, {Name: "h1", Role: topology.Host, Addr: ap("10.0.0.2")},
			{Name: "h2", Role: topology.Host, Addr: ap("10.0.0.3")}, {Name: "s0", Role: topology.Switch}},
		Links: []topology.Link{link("h0", "s0"), link("h1", "s0"), link("h2", "s0")},
	}
}

// intOption is what two switches stamp on every data segment the receiver
// sees: 1280 and 25600 bytes queued (tcopt/README.md), padded to 40 bytes.
var intOption = func() []byte {
	o := tcopt.Option{Slots: 5, Records: []tcopt.Record{tcopt.NewRecord(8, 1280, 0, 0), tcopt.NewRecord(8, 25600, 0, 0)}}
	b, _ := o.Marshal()
	for len(b)%4 != 0 {
		b = append(b, 1)
	}
	return b
}()

const offset = int64(1_700_000_000_000_000_000) // realtime - monotonic

type runFlow struct {
	id       string
	src, dst [4]byte
	srcName  string
	sport    uint16
	size     int
	gap      time.Duration
	start    time.Duration
	appExtra time.Duration // added to the app's end: a disagreement with the capture
	appSize  int           // flows.csv's size when not the transferred size
	ackDelay time.Duration // the receiver's ACK delay (default 20 us)
	failed   bool
}

// makeRun writes a run directory of flows whose FCTs are known exactly:
// each flow's capture at its sender, a copy at the receiver 2 us later,
// and flows.csv whose times are the sender capture's minus offset.
func makeRun(t *testing.T, flows []runFlow) (dir string, fcts map[string]time.Duration) {
	t.Helper()
	dir = t.TempDir()
	os.MkdirAll(filepath.Join(dir, "pcap"), 0o755)
	plan := dumbbell()
	run := map[string]any{"id": "test-run", "clock_offset_ns": offset, "topology": plan,
		"framing": map[string]int{"mss": 1460, "header_bytes": 54}}
	b, _ := json.Marshal(run)
	os.WriteFile(filepath.Join(dir, "run.json"), b, 0o644)
	perHost := map[string][]synth.Pkt{}
	var rx []synth.Pkt
	var csv strings.Builder
	csv.WriteString(strings.Join(rundir.FlowsColumns, ",") + "\n")
	fcts = map[string]time.Duration{}
	for i, f := range flows {
		ackDelay := f.ackDelay
		if ackDelay == 0 {
			ackDelay = 20 * time.Microsecond
		}
		ps, fct := synth.TransferBetween(f.src, f.dst, f.start, f.sport, uint32(1000*i+1), 5, f.size, 1460, f.gap, ackDelay)
		perHost[f.srcName] = append(perHost[f.srcName], ps...)
		for _, p := range ps {
			p.At += 2 * time.Microsecond
			if p.Payload > 0 {
				p.Options = intOption
			}
			rx = append(rx, p)
		}
		start := synth.Epoch0.Add(f.start).UnixNano() - offset
		end := start + int64(fct) + int64(f.appExtra)
		fcts[f.id] = fct + f.appExtra
		status, endS, fctS := "ok", fmt.Sprint(end), fmt.Sprint(end-start)
		if f.failed {
			status, endS, fctS = `"failed: timed out, no data"`, "", "" // quoted as encoding/csv writes it
		}
		size := f.size
		if f.appSize != 0 {
			size = f.appSize
		}
		fmt.Fprintf(&csv, "%s,%s,h2,%s,%d,%s,80,%d,%s,%d,%s,%s,,%s,test\n", f.id, f.srcName,
			netip.AddrFrom4(f.src), f.sport, netip.AddrFrom4(f.dst), size, map[bool]string{true: "lawA", false: "lawB"}[i%2 == 0], start, endS, fctS, status)
	}
	for h, ps := range perHost {
		os.WriteFile(filepath.Join(dir, "pcap", h+"-eth0.pcap"), synth.WritePcap(t, ps), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "pcap", "h2-eth0.pcap"), synth.WritePcap(t, rx), 0o644)
	os.WriteFile(filepath.Join(dir, "flows.csv"), []byte(csv.String()), 0o644)
	mono := synth.Epoch0.UnixNano() - offset
	var q, tr strings.Builder
	q.WriteString("time_ns,node,iface,qlen_bytes,tx_bytes\n")
	tr.WriteString("time_ns,sock,cc,cwnd_bytes,pacing_bps,signal,signal_name,note\n")
	for i := range 50 {
		fmt.Fprintf(&q, "%d,s0,p-h2,%d,%d\n", mono+int64(i)*20_000, (i%10)*3000, i*2500)
		fmt.Fprintf(&tr, "%d,1,lawA,%d,1000000000,%d,power,\n", mono+int64(i)*20_000, 14600+i*1460, 900+i)
	}
	os.WriteFile(filepath.Join(dir, "queues.csv"), []byte(q.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "cc_trace.csv"), []byte(tr.String()), 0o644)
	return dir, fcts
}

func TestRunAnalysisExact(t *testing.T) {
	flows := []runFlow{
		{id: "f0", src: h0, dst: h2, srcName: "h0", sport: 40000, size: 200_000, gap: 24 * time.Microsecond},
		{id: "f1", src: h1, dst: h2, srcName: "h1", sport: 40001, size: 200_000, gap: 24 * time.Microsecond},
		{id: "f2", src: h0, dst: h2, srcName: "h0", sport: 40002, size: 4_000, gap: 10 * time.Microsecond, start: 5 * time.Millisecond},
		{id: "f3", src: h1, dst: h2, srcName: "h1", sport: 40003, size: 8_000, gap: 10 * time.Microsecond, start: 6 * time.Millisecond, appExtra: time.Millisecond},
		{id: "f4", src: h1, dst: h2, srcName: "h1", sport: 40004, size: 8_000, gap: 10 * time.Microsecond, start: 7 * time.Millisecond, failed: true},
		{id: "f5", src: h0, dst: h2, srcName: "h0", sport: 40005, size: 3_000, gap: 10 * time.Microsecond, start: 8 * time.Millisecond, appSize: 3_001},
	}
	dir, fcts := makeRun(t, flows)
	byID := map[string]runFlow{}
	for _, f := range flows {
		byID[f.id] = f
	}
	a, err := AnalyzeRun(context.Background(), dir, Config{Window: 100 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Flows) != 6 || len(a.Captures) != 3 {
		t.Fatalf("%d flows, %d captures", len(a.Flows), len(a.Captures))
	}
	path, _ := ideal.PathOf(dumbbell(), "h0", "h2", ideal.DefaultFraming)
	for _, f := range a.Flows {
		if f.ID == "f4" {
			if f.Complete || !math.IsNaN(f.Slowdown.F()) || f.Status != "failed: timed out, no data" {
				t.Errorf("failed flow counted: %+v", f)
			}
			continue
		}
		want := path.FCT(uint64(f.Size), ideal.DefaultFraming)
		// The FCT ends when the last byte reached the receiver's capture
		// (the sender's last data segment + 2 us), not at flows.csv's end
		// (the sender's ACK of it, 20 us later, + appExtra); f5's sizes
		// disagree, so flows.csv's end stands.
		wantFCT, src := fcts[f.ID]-byID[f.ID].appExtra-20*time.Microsecond+2*time.Microsecond, "app+rx"
		if f.ID == "f5" {
			wantFCT, src = fcts[f.ID], "app"
		}
		if f.FCT != wantFCT || f.TimingSource != src || f.Ideal != want || f.Slowdown.F() != ideal.Slowdown(f.FCT, want) {
			t.Errorf("%s: fct %v (%s) ideal %v slowdown %v, want %v (%s) %v", f.ID, f.FCT, f.TimingSource, f.Ideal, f.Slowdown, wantFCT, src, want)
		}
		// The sender's capture (earliest) is the one used.
		if f.Capture != f.Src+"-eth0.pcap" || f.DeliveryCapture != "h2-eth0.pcap" || f.PcapStatus != "complete" || f.Bottleneck != "h2-s0" {
			t.Errorf("%s: capture %s status %s bottleneck %s", f.ID, f.Capture, f.PcapStatus, f.Bottleneck)
		}
	}
	if len(a.Mismatches) != 2 || a.Mismatches[0].Flow != "f3" || a.Mismatches[0].PcapFCT != fcts["f3"]-time.Millisecond ||
		a.Mismatches[1].Flow != "f5" || a.Mismatches[1].Reason != "flows.csv says 3001 bytes, the capture 3000" {
		t.Fatalf("mismatches %+v, want f3's FCT and f5's size", a.Mismatches)
	}
	if len(a.ByCC) != 2 || a.ByCC[0].CC != "lawA" || a.ByCC[0].Complete != 2 || a.ByCC[0].Flows != 3 || a.ByCC[1].Complete != 3 {
		t.Fatalf("by cc %+v", a.ByCC)
	}
	// f0 and f1 send in lockstep: every shared window is perfectly fair.
	if len(a.Fairness) != 1 || len(a.Fairness[0].Jain) < 25 {
		t.Fatalf("fairness %+v", a.Fairness)
	}
	for _, p := range a.Fairness[0].Jain {
		if p.Flows == 2 && math.Abs(p.Index.F()-1) > 0.02 {
			t.Errorf("jain %+v, want ~1", p)
		}
	}
	if a.Fairness[0].FirstFair < 0 || a.Fairness[0].FirstFair > time.Millisecond {
		t.Errorf("first fair at %v", a.Fairness[0].FirstFair)
	}
	if len(a.Queues) != 1 || a.Queues[0].Summary.Max != 27000 || len(a.Traces) != 1 || len(a.Traces[0].Cwnd) != 50 {
		t.Fatalf("queues %d traces %d", len(a.Queues), len(a.Traces))
	}
	dataSegs := 0
	for _, f := range flows {
		dataSegs += (f.size + 1459) / 1460
	}
	if len(a.INT) != 1 || a.INT[0].Capture != "h2-eth0.pcap" || a.INT[0].Stats.Forward != uint64(dataSegs) ||
		a.INT[0].Stats.Records != 2*uint64(dataSegs) || len(a.INT[0].Queues) != 2 || a.INT[0].Queues[1].Summary.Max != 25600 {
		t.Fatalf("INT %+v, want %d forward options at the receiver", a.INT, dataSegs)
	}
	if a.Queues[0].Samples[1].T != 20*time.Microsecond {
		t.Fatalf("queue time %v: offset or origin wrong", a.Queues[0].Samples[1].T)
	}
	// Throughput: f0 sends 1460 B every 24 us = 486.7 Mbit/s of payload.
	var f0 FlowSeries
	for _, s := range a.Throughput {
		if s.Flow == "f0" {
			f0 = s
		}
	}
	mid := f0.Points[len(f0.Points)/2].V
	if math.Abs(mid-1460*8/24e-6) > 0.15*1460*8/24e-6 {
		t.Errorf("f0 throughput %v bit/s mid-flow", mid)
	}

	out := filepath.Join(t.TempDir(), "out")
	if keep := os.Getenv("CCLAB_KEEP_REPORT"); keep != "" {
		out = keep // to look at the figures and page
	}
	o, err := Write(a, out)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"summary.json", "flows.csv", "slowdown_fixed_bins.csv", "slowdown_equal_bins.csv", "jain.csv",
		"report.md", "report.html", "figures/slowdown.png", "figures/slowdown.svg", "figures/queue_cdf.png", "figures/cwnd.svg", "figures/start_finish.png", "figures/int_queue.png", "int_summary.csv"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("missing %s (wrote %v)", name, o.Files)
		}
	}
	pb, _ := os.ReadFile(filepath.Join(out, "figures", "throughput.png"))
	if _, err := png.Decode(bytes.NewReader(pb)); err != nil {
		t.Errorf("throughput.png: %v", err)
	}
	page, _ := os.ReadFile(filepath.Join(out, "report.html"))
	if strings.Count(string(page), "<svg") < 8 || strings.Contains(string(page), "src=\"figures/") {
		t.Errorf("report.html is not self-contained with inline figures")
	}
	// Written again without queue samples: no queue figure may remain.
	a.Queues = nil
	if _, err := Write(a, out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "figures", "queue.png")); !os.IsNotExist(err) {
		t.Error("a stale queue figure survived")
	}
	var back Analysis
	js, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if err := json.Unmarshal(js, &back); err != nil || len(back.Flows) != 6 || !math.IsNaN(back.Flows[4].Slowdown.F()) {
		t.Fatalf("summary.json does not read back: %v", err)
	}
}

func TestEmptyAndBrokenRuns(t *testing.T) {
	dir, _ := makeRun(t, nil)
	os.RemoveAll(filepath.Join(dir, "pcap"))
	if _, err := AnalyzeRun(context.Background(), dir, Config{}); !errors.Is(err, ErrEmpty) {
		t.Fatalf("empty run: %v", err)
	}
	dir, _ = makeRun(t, []runFlow{{id: "f0", src: h0, dst: h2, srcName: "h0", sport: 40000, size: 20_000, gap: 24 * time.Microsecond}})
	// A capture cut in its last record is analysed up to it, and the
	// summary's first lines say so.
	p := filepath.Join(dir, "pcap", "h2-eth0.pcap")
	b, _ := os.ReadFile(p)
	os.WriteFile(p, b[:len(b)-7], 0o644)
	a, err := AnalyzeRun(context.Background(), dir, Config{})
	if err != nil {
		t.Fatalf("truncated capture: %v", err)
	}
	var cut *pcapflows.Cut
	for _, c := range a.Captures {
		if c.File == "h2-eth0.pcap" {
			cut = c.Cut
		}
	}
	if cut == nil || cut.Packets == 0 || cut.Offset <= 24 || cut.Offset >= int64(len(b)-7) {
		t.Fatalf("truncated capture: cut %+v", cut)
	}
	if l := a.SummaryLines(); len(l) < 2 || !strings.Contains(strings.Join(l[:2], "\n"), "h2-eth0.pcap cut at byte offset") {
		t.Fatalf("the summary does not open with the cut:\n%s", strings.Join(l, "\n"))
	}
	os.WriteFile(filepath.Join(dir, "flows.csv"), []byte("flow_id,src\nx,y\n"), 0o644)
	if _, err := AnalyzeRun(context.Background(), dir, Config{}); err == nil || !strings.Contains(err.Error(), "flows.csv") {
		t.Fatalf("bad flows.csv: %v", err)
	}
}

func TestPcapOnlyAnalysisAndCompare(t *testing.T) {
	dir, fcts := makeRun(t, []runFlow{
		{id: "f0", src: h0, dst: h2, srcName: "h0", sport: 40000, size: 3000, gap: 10 * time.Microsecond},
		{id: "f1", src: h1, dst: h2, srcName: "h1", sport: 40001, size: 50_000, gap: 12 * time.Microsecond},
	})
	files := []string{filepath.Join(dir, "pcap", "h0-eth0.pcap"), filepath.Join(dir, "pcap", "h1-eth0.pcap"), filepath.Join(dir, "pcap", "h2-eth0.pcap")}
	a, err := AnalyzePcaps(context.Background(), files, Config{BottleneckBps: 1e9, BaseRTT: 10 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Flows) != 2 {
		t.Fatalf("%d flows (captures seen twice must be one flow)", len(a.Flows))
	}
	p := ideal.Path{BottleneckBps: 1e9, OneWayDelay: 5 * time.Microsecond}
	for i, id := range []string{"f0", "f1"} {
		f := a.Flows[i]
		if f.TimingSource != "pcap" || f.FCT != fcts[id] || f.Size != uint64([]int{3000, 50_000}[i]) || f.Ideal != p.FCT(f.Size, ideal.DefaultFraming) {
			t.Errorf("flow %d: %+v, want FCT %v", i, f, fcts[id])
		}
	}
	dir2, _ := makeRun(t, []runFlow{
		{id: "f0", src: h0, dst: h2, srcName: "h0", sport: 40000, size: 3000, gap: 20 * time.Microsecond},
		{id: "f1", src: h1, dst: h2, srcName: "h1", sport: 40001, size: 3000, gap: 10 * time.Microsecond},
	})
	var as []*Analysis
	for _, d := range []string{dir, dir2} {
		a, err := AnalyzeRun(context.Background(), d, Config{})
		if err != nil {
			t.Fatal(err)
		}
		as = append(as, a)
	}
	c, err := Compare([]string{"seed1", "seed2"}, as, "lawB")
	if err != nil {
		t.Fatal(err)
	}
	tb := c.Tables()[0]
	if tb.Header[1] != "lawA" || tb.Header[3] != "lawA / lawB" || len(tb.Rows) != 3 || tb.Rows[2][0] != "mean" {
		t.Fatalf("compare table %+v", tb)
	}
	// seed2: lawA's short flow is slower (gap 20 us vs 10 us) than lawB's.
	r := tb.Rows[1]
	if r[1] == "-" || r[3] == "-" || r[3] <= "1" {
		t.Errorf("seed2 row %v: lawA / lawB should exceed 1", r)
	}
	if _, err := Compare([]string{"x"}, as[:1], "nope"); err == nil {
		t.Error("unknown baseline accepted")
	}
}

func TestHeaderOnlyFlowsCSVFallsBackToCaptures(t *testing.T) {
	dir, fcts := makeRun(t, []runFlow{{id: "f0", src: h0, dst: h2, srcName: "h0", sport: 40000, size: 20_000, gap: 24 * time.Microsecond}})
	os.WriteFile(filepath.Join(dir, "flows.csv"), []byte(strings.Join(rundir.FlowsColumns, ",")+"\n"), 0o644)
	a, err := AnalyzeRun(context.Background(), dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Flows) != 1 || a.Flows[0].TimingSource != "pcap" || a.Flows[0].FCT != fcts["f0"] || a.Flows[0].Src != "h0" || len(a.Warnings) == 0 {
		t.Fatalf("flows %+v warnings %v", a.Flows, a.Warnings)
	}
}

func TestExperimentDirectoryPutsVariantsSideBySide(t *testing.T) {
	parent := t.TempDir()
	for _, v := range []string{"cubic", "powertcp"} {
		d, _ := makeRun(t, []runFlow{
			{id: "f0", src: h0, dst: h2, srcName: "h0", sport: 40000, size: 100_000, gap: 24 * time.Microsecond},
			{id: "f1", src: h1, dst: h2, srcName: "h1", sport: 40001, size: 100_000, gap: 24 * time.Microsecond},
		})
		if err := os.Rename(d, filepath.Join(parent, v)); err != nil {
			t.Fatal(err)
		}
	}
	a, err := Analyze(context.Background(), parent, Config{Window: 100 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Flows) != 4 || a.Flows[0].ID != "cubic/f0" || a.Flows[3].ID != "powertcp/f1" || len(a.Captures) != 6 {
		t.Fatalf("flows %d (%s..%s), captures %d", len(a.Flows), a.Flows[0].ID, a.Flows[len(a.Flows)-1].ID, len(a.Captures))
	}
	if len(a.Fairness) != 2 || a.Fairness[0].Bottleneck != "cubic/h2-s0" || a.Fairness[1].Bottleneck != "powertcp/h2-s0" {
		t.Fatalf("fairness %+v", a.Fairness)
	}
	if len(a.ByCC) != 2 || a.ByCC[0].Flows != 2 || a.ByCC[1].Flows != 2 {
		t.Fatalf("by cc %+v", a.ByCC)
	}
	if _, err := Analyze(context.Background(), t.TempDir(), Config{}); err == nil || !strings.Contains(err.Error(), "not a run") {
		t.Fatalf("empty directory: %v", err)
	}
	if l := a.FidelityLines(); len(l) != 0 {
		t.Fatalf("runs without a verdict got fidelity lines %q", l)
	}

	// With verdicts in run.json, the summary's first lines say whether
	// the emulation held, and why not for the variant where it did not.
	verdicts := map[string]string{"cubic": `{"verdict":"faithful"}`,
		"powertcp": `{"verdict":"degraded","reasons":["CPU queue p99: 1.2ms per round trip"]}`}
	for v, js := range verdicts {
		p := filepath.Join(parent, v, "run.json")
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b[:len(b)-1], []byte(`,"fidelity":`+js+`}`)...)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if a, err = Analyze(context.Background(), parent, Config{Window: 100 * time.Microsecond}); err != nil {
		t.Fatal(err)
	}
	sum := a.SummaryLines()
	if !strings.HasPrefix(sum[0], "emulation: DEGRADED in 1 of 2 variants") || sum[1] != "  powertcp: CPU queue p99: 1.2ms per round trip" {
		t.Fatalf("summary head %q", sum[:2])
	}
	if md := string(a.Markdown(nil)); !strings.Contains(md, "emulation: DEGRADED") {
		t.Fatalf("report.md lacks the verdict")
	}
}

// The cross-check compares the same events on both sides: a receiver
// that read its last byte when it arrived is not a mismatch however late
// its ACK reached the sender (3 ms here, three times the tolerance: the
// former check, the sender's ACK against the read, flagged it); one that
// read it 2 ms after it arrived is, and the summary says so.
func TestMismatchSameEvents(t *testing.T) {
	const delay = 3 * time.Millisecond
	dir, _ := makeRun(t, []runFlow{
		// app end = the sender's last ACK + appExtra = the last data
		// segment's arrival at the receiver (2 us after the sender's copy)
		{id: "f0", src: h0, dst: h2, srcName: "h0", sport: 40000, size: 20_000, gap: 24 * time.Microsecond,
			ackDelay: delay, appExtra: -delay + 2*time.Microsecond},
		{id: "f1", src: h1, dst: h2, srcName: "h1", sport: 40001, size: 20_000, gap: 24 * time.Microsecond,
			ackDelay: delay, appExtra: -delay + 2*time.Millisecond},
	})
	a, err := AnalyzeRun(context.Background(), dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Mismatches) != 1 || a.Mismatches[0].Flow != "f1" || !strings.HasPrefix(a.Mismatches[0].Reason, "last byte arrived") {
		t.Fatalf("mismatches %+v, want f1's late read only", a.Mismatches)
	}
	if d := a.Mismatches[0].EndDelta; d > -1900*time.Microsecond || d < -2100*time.Microsecond {
		t.Errorf("f1's end delta %v, want about -2ms", d)
	}
	if !strings.Contains(strings.Join(a.SummaryLines(), "\n"), "1 read their last byte more than a quarter RTT after it arrived") {
		t.Errorf("summary does not explain the mismatch:\n%s", strings.Join(a.SummaryLines(), "\n"))
	}
}
