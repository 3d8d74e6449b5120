package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	synth "cclab/internal/pcapsynth"
	"cclab/internal/units"
	"cclab/topology"
)

// writeRun makes a two-host run directory: one flow per law, their
// packets captured at the sender, flows.csv from the same times.
func writeRun(t *testing.T, gaps map[string]time.Duration) string {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "pcap"), 0o755)
	plan := topology.Plan{Name: "pair", Kind: "star",
		Nodes: []topology.Node{{Name: "h0", Role: topology.Host, Addr: netip.MustParseAddr("10.0.0.1")},
			{Name: "h1", Role: topology.Host, Addr: netip.MustParseAddr("10.0.0.2")}},
		Links: []topology.Link{{A: topology.Port{Node: "h0", Iface: "eth0"}, B: topology.Port{Node: "h1", Iface: "eth0"}, Rate: units.Rate(1e9)}}}
	rj, _ := json.Marshal(map[string]any{"id": "cli", "clock_offset_ns": 0, "topology": plan})
	os.WriteFile(filepath.Join(dir, "run.json"), rj, 0o644)
	csv := "flow_id,src,dst,src_addr,src_port,dst_addr,dst_port,size_bytes,cc,start_ns,end_ns,fct_ns,ideal_fct_ns,status,group\n"
	var all []synth.Pkt
	port := uint16(40000)
	for _, law := range []string{"lawA", "lawB"} {
		port++
		start := time.Duration(port-40000) * time.Millisecond
		ps, fct := synth.Transfer(start, port, 1, 1, 5000, 1460, gaps[law], 10*time.Microsecond)
		all = append(all, ps...)
		s := synth.Epoch0.Add(start).UnixNano()
		csv += fmt.Sprintf("%s,h0,h1,10.0.0.1,%d,10.0.0.2,80,5000,%s,%d,%d,%d,,ok,test\n", law, port, law, s, s+int64(fct), int64(fct))
	}
	os.WriteFile(filepath.Join(dir, "pcap", "h0-eth0.pcap"), synth.WritePcap(t, all), 0o644)
	os.WriteFile(filepath.Join(dir, "flows.csv"), []byte(csv), 0o644)
	return dir
}

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func TestAnalyzeCommand(t *testing.T) {
	dir := writeRun(t, map[string]time.Duration{"lawA": 10 * time.Microsecond, "lawB": 40 * time.Microsecond})
	out, err := run(t, "analyze", dir, "--json", "--quiet")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Flows []struct {
			ID       string  `json:"id"`
			Complete bool    `json:"complete"`
			Slowdown float64 `json:"slowdown"`
		} `json:"flows"`
		Outputs struct{ Files []string } `json:"outputs"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if len(res.Flows) != 2 || !res.Flows[0].Complete || res.Flows[1].Slowdown <= res.Flows[0].Slowdown {
		t.Fatalf("flows %+v", res.Flows)
	}
	if _, err := os.Stat(filepath.Join(dir, "analysis", "report.html")); err != nil {
		t.Fatal(err)
	}
	// The one-screen summary.
	out, err = run(t, "analyze", dir, "--quiet", "--out", t.TempDir())
	if err != nil || !strings.Contains(out, "2 flows, 2 complete") || strings.Count(out, "\n") > 24 {
		t.Fatalf("summary: %v\n%s", err, out)
	}
	// Seeds table: lawB's short flow is slower in both runs.
	dir2 := writeRun(t, map[string]time.Duration{"lawA": 20 * time.Microsecond, "lawB": 30 * time.Microsecond})
	cmpOut := t.TempDir()
	out, err = run(t, "analyze", "--compare", dir, dir2, "--baseline", "lawA", "--quiet", "--out", cmpOut)
	if err != nil || !strings.Contains(out, "p99.9 short-flow slowdown") || !strings.Contains(out, "lawB / lawA") {
		t.Fatalf("compare: %v\n%s", err, out)
	}
	// Captures alone, with a rate.
	out, err = run(t, "analyze", "--pcap", filepath.Join(dir, "pcap", "h0-eth0.pcap"), "--rate", "1Gbit", "--base-rtt", "10us", "--quiet", "--out", t.TempDir())
	if err != nil || !strings.Contains(out, "2 flows, 2 complete") {
		t.Fatalf("--pcap: %v\n%s", err, out)
	}
	// Captures with a topology: paths, hosts and slowdowns from run.json.
	out, err = run(t, "analyze", "--pcap", filepath.Join(dir, "pcap", "h0-eth0.pcap"), "--topology", filepath.Join(dir, "run.json"), "--json", "--quiet", "--out", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	res.Flows = nil
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Flows) != 2 || res.Flows[0].Slowdown < 1 {
		t.Fatalf("--topology: %v %+v", err, res.Flows)
	}
	// A truncated capture is analysed up to the cut, which the summary
	// names near its top; a file that is no capture is an error, and
	// nothing is written.
	p := filepath.Join(dir2, "pcap", "h0-eth0.pcap")
	b, _ := os.ReadFile(p)
	os.WriteFile(p, b[:len(b)-5], 0o644)
	out, err = run(t, "analyze", dir2, "--quiet", "--out", t.TempDir())
	if err != nil || !strings.Contains(strings.Join(strings.SplitN(out, "\n", 3)[:2], "\n"), "h0-eth0.pcap cut at byte offset") {
		t.Fatalf("truncated capture: %v\n%s", err, out)
	}
	os.WriteFile(p, []byte("not a capture"), 0o644)
	bad := filepath.Join(t.TempDir(), "bad")
	if _, err := run(t, "analyze", dir2, "--quiet", "--out", bad); err == nil || !strings.Contains(err.Error(), "h0-eth0.pcap") {
		t.Fatalf("a file that is no capture: %v", err)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Fatal("output written for a failed analysis")
	}
	if _, err := run(t, "analyze", "--pcap", p, "--rate", "fast"); err == nil {
		t.Fatal("bad --rate accepted")
	}
	if _, err := run(t, "analyze", t.TempDir()); err == nil || !strings.Contains(err.Error(), "run.json") {
		t.Fatalf("not a run: %v", err)
	}
}
