package runner

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"cclab/internal/runid"
	"cclab/orchestrator/cleanup"
	"cclab/rundir"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// writeExperiment writes an experiment file next to an absolute topology
// path and returns its path.
func writeExperiment(t *testing.T, topo, body string) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("../../topologies", topo))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "exp.yaml")
	if err := os.WriteFile(p, []byte("name: test\ntopology: "+abs+"\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runExperiment runs the experiment file exp once (20 RTT samples per
// calibration), asserts nothing of it is left, and returns the result and
// the run directory.
func runExperiment(t *testing.T, exp string) (*Result, string) {
	t.Helper()
	p, id := prepareRun(t, exp)
	out := t.TempDir()
	res, err := Run(context.Background(), p, Options{Out: out, ID: id, Log: io.Discard, RTTSamples: 20})
	if err != nil {
		t.Fatal(err)
	}
	noLeftovers(t, id)
	return res, filepath.Join(out, string(id))
}

// noLeftovers asserts that nothing of run id remains.
func noLeftovers(t *testing.T, id runid.ID) {
	t.Helper()
	if left, err := cleanup.Remains(id); err != nil || len(left) > 0 {
		t.Errorf("run %s: remains %v (%v)", id, left, err)
	}
}

func cleanAfter(t *testing.T, id runid.ID) {
	t.Cleanup(func() { cleanup.Clean(context.Background(), id) })
}

// readRunJSON decodes the run.json of run directory dir into v.
func readRunJSON(t *testing.T, dir string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("run.json: %v", err)
	}
}

// openPcap opens a capture for reading; it is closed when the test ends.
func openPcap(t *testing.T, path string) *pcapgo.Reader {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

// prepareRun prepares the experiment file exp for a fresh run id whose
// objects are cleaned up when the test ends.
func prepareRun(t *testing.T, exp string) (*Prepared, runid.ID) {
	t.Helper()
	p, err := Prepare(exp)
	if err != nil {
		t.Fatal(err)
	}
	id := runid.New()
	cleanAfter(t, id)
	return p, id
}

// An 8:1 incast on the 100 Mbit/s star: one flows.csv row per flow, every
// flow ok, FCTs that respect the bottleneck, pcaps that decode, a run.json
// that describes the run, and nothing left behind.
func TestIncastRun(t *testing.T) {
	exp := writeExperiment(t, "star-16.yaml", `seed: 3
timeout: 10s
workload:
  - name: incast
    incast: {dst: h0, fan_in: 8, size: 1MB, start: 10ms, stagger: 20us, per_stagger: 2}
`)
	p, id := prepareRun(t, exp)
	out := t.TempDir()
	probe := &probeExtension{}
	res, err := Run(context.Background(), p, Options{Out: out, ID: id, Log: io.Discard, RTTSamples: 50,
		Extensions: func() []Extension { return []Extension{probe} }})
	if err != nil {
		t.Fatal(err)
	}
	noLeftovers(t, id)
	dir := filepath.Join(out, string(id))
	if res.Dir != dir || len(res.Runs) != 1 || res.Runs[0].OK != 8 || res.Runs[0].Failed != 0 {
		t.Fatalf("result %+v", res)
	}

	rows := readCSV(t, filepath.Join(dir, "flows.csv"))
	if len(rows) != 9 || strings.Join(rows[0], ",") != strings.Join(rundir.FlowsColumns, ",") {
		t.Fatalf("flows.csv has %d lines, header %v", len(rows), rows[0])
	}
	var first, last int64 = 1 << 62, 0
	// A flow is its source address and port: hosts pick ephemeral ports
	// on their own, and two of them may pick the same one.
	srcs := map[string]bool{}
	for _, r := range rows[1:] {
		col := func(name string) string {
			for i, h := range rundir.FlowsColumns {
				if h == name {
					return r[i]
				}
			}
			t.Fatalf("no column %s", name)
			return ""
		}
		num := func(name string) int64 {
			v, err := strconv.ParseInt(col(name), 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return v
		}
		if col("status") != "ok" || col("dst") != "h0" || col("group") != "incast" || col("cc") != "cubic" || num("size_bytes") != 1000000 {
			t.Fatalf("row %v", r)
		}
		start, end, fct, idl := num("start_ns"), num("end_ns"), num("fct_ns"), num("ideal_fct_ns")
		if fct != end-start || fct <= 0 || fct > int64(5*time.Second) {
			t.Fatalf("row %v: fct %d", r, fct)
		}
		// Alone, 1 MB at 100 Mbit/s takes ~83 ms; HTB's burst lets the
		// first bytes through faster but not the whole flow.
		if idl < int64(80*time.Millisecond) || fct < idl*3/4 {
			t.Fatalf("row %v: fct %v against ideal %v", r, time.Duration(fct), time.Duration(idl))
		}
		first, last = min(first, start), max(last, end)
		srcs[col("src_addr")+":"+col("src_port")] = true
	}
	// 8 x 1 MB through the 100 Mbit/s port to h0 take >= 640 ms (less
	// what the burst absorbs before the rate applies).
	if span := time.Duration(last - first); span < 600*time.Millisecond || span > 5*time.Second {
		t.Fatalf("incast took %v, want about 680ms", span)
	} else {
		t.Logf("8 x 1 MB incast over 100 Mbit/s took %v", span)
	}

	var rj struct {
		ID            string `json:"id"`
		ClockOffsetNs int64  `json:"clock_offset_ns"`
		Seed          int64  `json:"seed"`
		Experiment    struct {
			Source string `json:"source"`
			SHA256 string `json:"source_sha256"`
		} `json:"experiment"`
		Topology struct {
			Nodes []any `json:"nodes"`
		} `json:"topology"`
		Kernel struct {
			Release string `json:"release"`
		} `json:"kernel"`
		Node struct {
			Hostname  string  `json:"hostname"`
			CPUs      []int   `json:"cpus"`
			StealIdle float64 `json:"steal_idle_share"`
		} `json:"node"`
		Framing struct {
			MSS int `json:"mss"`
		} `json:"framing"`
		Health struct {
			RTT struct {
				MedianNs int64 `json:"median_ns"`
			} `json:"rtt_noise_floor"`
			CPU struct {
				Windows int `json:"windows"`
			} `json:"cpu"`
			Links []struct {
				Node  string  `json:"node"`
				Iface string  `json:"iface"`
				Ratio float64 `json:"peak_ratio"`
			} `json:"loaded_links"`
		} `json:"health"`
		CaptureDrops uint64 `json:"capture_drops"`
		Capture      []any  `json:"capture"`
		Extensions   struct {
			Probe struct {
				Namespaces int `json:"namespaces"`
				Flows      int `json:"flows"`
			} `json:"probe"`
		} `json:"extensions"`
	}
	readRunJSON(t, dir, &rj)
	if rj.ID != string(id) || rj.Seed != 3 || rj.ClockOffsetNs <= 0 || !strings.Contains(rj.Experiment.Source, "fan_in: 8") ||
		len(rj.Topology.Nodes) != 18 || rj.Kernel.Release == "" || rj.Framing.MSS != 1448 || rj.Health.RTT.MedianNs <= 0 ||
		rj.Node.Hostname == "" || len(rj.Node.CPUs) == 0 || rj.Node.StealIdle < 0 || rj.Experiment.SHA256 != sourceSHA256(rj.Experiment.Source) ||
		rj.CaptureDrops != 0 || len(rj.Capture) != 17 {
		t.Fatalf("run.json: %+v", rj)
	}
	// The extension ran with the network up and its result is recorded.
	if rj.Extensions.Probe.Namespaces != incastNamespaces || rj.Extensions.Probe.Flows != 8 || !probe.stopped {
		t.Fatalf("extension: %+v, stopped %v", rj.Extensions, probe.stopped)
	}
	if _, err := os.Stat(filepath.Join(dir, "probe.txt")); err != nil {
		t.Fatalf("extension file: %v", err)
	}
	// The bottleneck s0 -> h0 is loaded and HTB held it near 100 Mbit/s.
	found := false
	for _, l := range rj.Health.Links {
		if l.Node == "s0" && l.Iface == "h0" {
			found = true
			t.Logf("bottleneck s0->h0: peak %.3f of its configured rate", l.Ratio)
			if l.Ratio < 0.85 || l.Ratio > 1.15 {
				t.Errorf("bottleneck achieved %.2f of its rate", l.Ratio)
			}
		}
	}
	if !found {
		t.Errorf("bottleneck s0->h0 not among loaded links: %+v", rj.Health.Links)
	}

	// The receiver's capture holds the 8 flows' SYNs (and decodes).
	seen := pcapFlowPorts(t, filepath.Join(dir, "pcap", "h0-eth0.pcap"))
	syns := 0
	for src, s := range seen {
		if s.syn {
			syns++
			if !srcs[src] {
				t.Fatalf("SYN from %s, which no flow used", src)
			}
		}
	}
	if syns != 8 {
		// Seen once in CI-like runs (7 of 8, no capture drop): say
		// enough to tell a lost SYN from a flow the capture missed whole.
		var why []string
		for _, r := range rows[1:] {
			field := func(name string) string { return r[slices.Index(rundir.FlowsColumns, name)] }
			src := field("src_addr") + ":" + field("src_port")
			start, _ := strconv.ParseInt(field("start_ns"), 10, 64)
			s, ok := seen[src]
			if !ok {
				why = append(why, src+": nothing in the capture")
				continue
			}
			why = append(why, fmt.Sprintf("%s: SYN %v, %d packets, first %v after the flow's start",
				src, s.syn, s.packets, time.Duration(s.firstNs-(start+rj.ClockOffsetNs))))
		}
		t.Fatalf("h0 capture has %d flow SYNs, want 8; capture %+v\n%s", syns, rj.Capture, strings.Join(why, "\n"))
	}
	for _, f := range []string{"h0-eth0.pcap", "h1-eth0.pcap"} {
		tshark(t, filepath.Join(dir, "pcap", f))
	}
}

func readCSV(t *testing.T, path string) [][]string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// portSeen is what a capture holds of one flow.
type portSeen struct {
	syn     bool
	packets int
	firstNs int64 // the first packet's capture time (CLOCK_REALTIME)
}

// pcapFlowPorts reads the packets to the flow port in a capture, by their
// source address and port.
func pcapFlowPorts(t *testing.T, path string) map[string]portSeen {
	r := openPcap(t, path)
	seen := map[string]portSeen{}
	for {
		data, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return seen
		}
		if err != nil {
			t.Fatal(err)
		}
		pkt := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.Default)
		tcp, ok := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP)
		ip, ok4 := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		if !ok || !ok4 || tcp.DstPort != flowPort {
			continue
		}
		src := fmt.Sprintf("%s:%d", ip.SrcIP, tcp.SrcPort)
		s := seen[src]
		if s.packets == 0 {
			s.firstNs = ci.Timestamp.UnixNano()
		}
		s.packets++
		s.syn = s.syn || (tcp.SYN && !tcp.ACK)
		seen[src] = s
	}
}

func tshark(t *testing.T, path string) {
	out, err := exec.Command("tshark", "-r", path).CombinedOutput()
	if err != nil {
		t.Fatalf("tshark -r %s: %v\n%s", path, err, out)
	}
	for _, bad := range []string{"malformed", "warn"} {
		if strings.Contains(strings.ToLower(string(out)), bad) {
			t.Fatalf("tshark -r %s mentions %q", path, bad)
		}
	}
}

// Everything is checked before anything is created.
func TestPrepareRefusesBeforeBuilding(t *testing.T) {
	cases := map[string]string{
		"cc: nosuchcc\nworkload:\n  - name: l\n    long: {src: h1, dst: h0, stop: 1s}\n":                                    `congestion control "nosuchcc" is not loaded`,
		"compare: [cubic, nosuchlaw]\nworkload:\n  - name: l\n    long: {src: h1, dst: h0, stop: 1s}\n":                     `:3: compare: "nosuchlaw" is no congestion control cclab knows`,
		"workload:\n  - name: l\n    cc: nosuchcc2\n    long: {src: h1, dst: h0, stop: 1s}\n":                               `:4: workload entry "l": congestion control "nosuchcc2" is not loaded`,
		"workload:\n  - name: l\n    long: {src: h1, dst: h99, stop: 1s}\n":                                                 `:5: no node "h99"`,
		"compare: [nosuch1, nosuch2]\nskip_missing: true\nworkload:\n  - name: l\n    long: {src: h1, dst: h0, stop: 1s}\n": `:3: compare: "nosuch1" is no congestion control cclab knows`,
		// An ECN law behind iperf3's listener would get no ECN at all.
		"compare: [dqv]\nlaws: {}\nvariants:\n  dqv: {law: dcqcn}\nworkload:\n  - name: l\n    tool: iperf3\n    long: {src: h1, dst: h0, stop: 1s}\n": `dqv runs iperf3 flows (workload entry "l"): iperf3's listener cannot run an ECN law`,
		// A QCN law without a congestion point would run at line rate.
		"compare: [qv]\nlaws: {}\nvariants:\n  qv: {law: qcn_t}\nswitch: {int: true}\nworkload:\n  - name: l\n    long: {src: h1, dst: h0, stop: 1s}\n": `qv's run has qv flows (workload entry "l") and no QCN congestion point`,
		"compare: [cubic]\nlaws: {}\nswitch: {int: true}\nworkload:\n  - name: l\n    cc: qcn\n    long: {src: h1, dst: h0, stop: 1s}\n":                `cubic's run has qcn flows (workload entry "l") and no QCN congestion point`,
	}
	for body, want := range cases {
		_, err := Prepare(writeExperiment(t, "star-16.yaml", body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", body, err, want)
		}
	}
	if _, err := Prepare(writeExperiment(t, "no-such-topology.yaml", "workload: []\n")); err == nil {
		t.Error("missing topology accepted")
	}
}

// incastNamespaces is what the incast star's runs make: its 18 nodes and
// the CPU queue probe's chain of 3 (two links, as its 1-switch paths).
const incastNamespaces = 18 + 3

// Every shipped experiment parses, finds its topology and generates flows.
func TestShippedExperimentsPrepare(t *testing.T) {
	files, _ := filepath.Glob("../../experiments/*.yaml")
	if len(files) < 5 {
		t.Fatalf("only %d experiments shipped", len(files))
	}
	for _, f := range files {
		p, err := Prepare(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		t.Logf("%s: %d flows, runs %d, skipped %v", filepath.Base(f), len(p.Variants[0].Flows), len(p.Variants), p.Skipped)
	}
}

// probeExtension checks what a run extension sees: the network's
// namespaces exist at Start, and what Stop returns lands in run.json.
type probeExtension struct {
	namespaces, flows int
	stopped           bool
}

func (p *probeExtension) Name() string { return "probe" }

func (p *probeExtension) Start(ctx context.Context, env *Env) error {
	ns, err := cleanup.Namespaces(env.ID)
	if err != nil {
		return err
	}
	p.namespaces, p.flows = len(ns), len(env.Flows)
	return os.WriteFile(filepath.Join(env.Dir, "probe.txt"), []byte("hello\n"), 0o644)
}

func (p *probeExtension) Stop(ctx context.Context) (any, error) {
	p.stopped = true
	return map[string]int{"namespaces": p.namespaces, "flows": p.flows}, nil
}

// A 1000:1 incast through `Run`: 1000 flows open at once on one receiver,
// every one completes (after the losses a 128 KB buffer forces).
func TestThousandFlowIncastRun(t *testing.T) {
	exp := writeExperiment(t, "star-16.yaml", "timeout: 60s\nworkload:\n  - name: incast\n    incast: {dst: h0, fan_in: 1000, size: 10KB}\n")
	p, id := prepareRun(t, exp)
	out := t.TempDir()
	res, err := Run(context.Background(), p, Options{Out: out, ID: id, RTTSamples: 20})
	if err != nil {
		t.Fatal(err)
	}
	noLeftovers(t, id)
	if s := res.Runs[0]; s.OK != 1000 || s.Failed != 0 {
		t.Fatalf("summary %+v", s)
	}
	open := maxOpen(t, readCSV(t, filepath.Join(res.Dir, "flows.csv"))[1:])
	if open < 900 {
		t.Fatalf("only %d flows open at once", open)
	}
	t.Logf("1000-flow incast: %d open at once, median FCT %v, p99 %v, capture drops %d",
		open, time.Duration(res.Runs[0].MedianFCTNs), time.Duration(res.Runs[0].P99FCTNs), res.Runs[0].CaptureDrops)
}

// maxOpen is the largest number of flows open at one instant: a sweep over
// the flows' start and end times (flows.csv columns 9 and 10, ns).
func maxOpen(t *testing.T, rows [][]string) int {
	t.Helper()
	type event struct {
		at    int64
		delta int
	}
	var ev []event
	for _, r := range rows {
		start, err1 := strconv.ParseInt(r[9], 10, 64)
		end, err2 := strconv.ParseInt(r[10], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("flows.csv row %v: start/end not integers", r)
		}
		ev = append(ev, event{start, +1}, event{end, -1})
	}
	// At equal times count the start first: a flow ending exactly when
	// another starts overlapped it.
	sort.Slice(ev, func(i, j int) bool {
		if ev[i].at != ev[j].at {
			return ev[i].at < ev[j].at
		}
		return ev[i].delta > ev[j].delta
	})
	open, most := 0, 0
	for _, e := range ev {
		open += e.delta
		most = max(most, open)
	}
	return most
}

// slowExtension takes longer to start than the workload's lead time, as
// loading and verifying BPF programs does.
type slowExtension struct{ d time.Duration }

func (s slowExtension) Name() string { return "slow" }

func (s slowExtension) Start(ctx context.Context, env *Env) error {
	time.Sleep(s.d)
	return nil
}

func (s slowExtension) Stop(ctx context.Context) (any, error) { return nil, nil }

// A slow extension does not eat the workload's schedule: time zero is
// taken after it started, so a long flow starting at 0 still carries data
// and starts within a few ms of zero.
func TestSlowExtensionKeepsSchedule(t *testing.T) {
	exp := writeExperiment(t, "star-16.yaml", `timeout: 5s
capture: {enabled: false}
workload:
  - name: long
    long: {src: h1, dst: h0, start: 0, stop: 100ms}
`)
	p, id := prepareRun(t, exp)
	out := t.TempDir()
	_, err := Run(context.Background(), p, Options{Out: out, ID: id, Log: io.Discard, RTTSamples: 20,
		Extensions: func() []Extension { return []Extension{slowExtension{300 * time.Millisecond}} }})
	if err != nil {
		t.Fatal(err)
	}
	var rj struct {
		Zero   int64       `json:"workload_zero_ns"`
		Stages []StageTime `json:"stages"`
	}
	readRunJSON(t, filepath.Join(out, string(id)), &rj)
	rows := readCSV(t, filepath.Join(out, string(id), "flows.csv"))
	start, _ := strconv.ParseInt(rows[1][9], 10, 64)
	// The bug this guards against shows as the extension's 300 ms; a
	// loaded machine may wake the flow's goroutine tens of ms late.
	if rows[1][13] != "ok" || start-rj.Zero > int64(100*time.Millisecond) || start < rj.Zero {
		t.Fatalf("long flow: status %q, started %v after zero", rows[1][13], time.Duration(start-rj.Zero))
	}
	// run.json times every stage, in order: the extension's 300 ms are
	// the attach stage's, the 100 ms flow the workload's.
	var names []string
	took := map[string]time.Duration{}
	for _, st := range rj.Stages {
		names = append(names, st.Name)
		took[st.Name] = time.Duration(st.Ns)
		if st.Ns <= 0 {
			t.Errorf("stage %s took %d ns", st.Name, st.Ns)
		}
	}
	if want := "build calibrate attach workload collect verdict teardown"; strings.Join(names, " ") != want {
		t.Errorf("stages %v, want %s", names, want)
	}
	if took["attach"] < 300*time.Millisecond || took["workload"] < 100*time.Millisecond {
		t.Errorf("stage times %v: attach holds the extension's 300 ms, the workload its 100 ms flow", took)
	}
}

// An experiment's `laws:` section makes the run register the laws it uses
// (so they count as available before they are loaded), and its parameters
// are checked against the law table before anything is created, each
// refusal at the line of the setting it blames.
func TestPrepareLawsSection(t *testing.T) {
	body := "compare: [cubic, hpcc, dctcp]\nlaws:\n  host_bw_mbps: 100\n  hpcc.eta_ppm: 950000\nworkload:\n  - name: l\n    long: {src: h1, dst: h0, stop: 1s}\n"
	p, err := Prepare(writeExperiment(t, "star-16.yaml", body))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(p.Laws, ",") != "hpcc,dctcp" || len(p.Variants) != 3 || len(p.Skipped) != 0 {
		t.Fatalf("laws %v, %d variants, skipped %v", p.Laws, len(p.Variants), p.Skipped)
	}
	bad := strings.Replace(body, "950000", "5", 1)
	_, err = Prepare(writeExperiment(t, "star-16.yaml", bad))
	if err == nil || !strings.Contains(err.Error(), "exp.yaml:6:3: laws: hpcc eta_ppm=5 ppm: outside its range") {
		t.Fatalf("out-of-range eta accepted or badly reported: %v", err)
	}
	_, err = Prepare(writeExperiment(t, "star-16.yaml", strings.Replace(body, "host_bw_mbps", "warp_factor", 1)))
	if err == nil || !strings.Contains(err.Error(), "warp_factor") {
		t.Fatalf("unknown parameter accepted: %v", err)
	}
}
