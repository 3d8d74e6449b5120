package runner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"cclab/analysis/pcapflows"
	"cclab/internal/runid"
	"cclab/rundir"
)

// A workload entry's set: (experiment.Entry.Set) gives that entry's flows
// law parameters of their own: the run registers a variant of the run's
// law for them and their flows run it. Two QCN senders into one 1 Gbit/s
// port, one started at 100 Mbit/s (init_rate_kbps), the other at the
// line: over the first 40 ms (before QCN's timer can have raised it from
// fast recovery) the first sends at about its starting rate, the second
// well above it, and run.json records the derived registration with the
// entry's parameter.
func TestEntrySetStartsAFlowBelowTheLine(t *testing.T) {
	topo := qcnStar(t)
	id := runid.New()
	q := "t" + string(id) + "q" // registrations are machine-wide
	exp := filepath.Join(t.TempDir(), "exp.yaml")
	if err := os.WriteFile(exp, []byte(fmt.Sprintf(`name: entryset
topology: %s
compare: [%s]
variants:
  %s: {law: qcn}
timeout: 30s
hosts: {gso_max_size: 16KB}
switch:
  int: true
  qcn: {qeq: 64KB}
workload:
  - name: slow
    set: {init_rate_kbps: 100000}
    long: {src: h1, dst: h0, start: 0, stop: 600ms}
  - name: fast
    long: {src: h2, dst: h0, start: 0, stop: 600ms}
`, topo, q, q)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := runWithOwnLaws(t, exp, id)
	dir := filepath.Join(out, string(id), q)
	var rj struct {
		ZeroNs        int64                `json:"workload_zero_ns"`
		ClockOffsetNs int64                `json:"clock_offset_ns"`
		CC            map[string]rundir.CC `json:"cc"`
		Topology      struct {
			Nodes []struct {
				Name string `json:"name"`
				Addr string `json:"addr"`
			} `json:"nodes"`
		} `json:"topology"`
		Workload []struct {
			Group string `json:"group"`
			Src   string `json:"src"`
			CC    string `json:"cc"`
		} `json:"workload_flows"`
	}
	readRunJSON(t, dir, &rj)
	slowCC := q + "_slow"
	if len(rj.Workload) != 2 {
		t.Fatalf("run.json lists %d flows, want 2", len(rj.Workload))
	}
	for _, f := range rj.Workload {
		if want := map[string]string{"slow": slowCC, "fast": q}[f.Group]; f.CC != want {
			t.Errorf("entry %s's flow runs %s, want %s", f.Group, f.CC, want)
		}
	}
	if p := rj.CC[slowCC].Params["init_rate_kbps"]; fmt.Sprint(p) != "100000" {
		t.Errorf("run.json cc %s: init_rate_kbps %v, want 100000 (%+v)", slowCC, p, rj.CC)
	}
	if p := rj.CC[q].Params["init_rate_kbps"]; fmt.Sprint(p) != "0" {
		t.Errorf("run.json cc %s: init_rate_kbps %v, want 0 (the line)", q, p)
	}

	// Each sender's rate over [0, 40 ms] of its flow, at the receiver.
	files, _ := filepath.Glob(filepath.Join(dir, "pcap", "h0-*.pcap"))
	if len(files) != 1 {
		t.Fatalf("captures of h0: %v", files)
	}
	first := map[string]int64{}
	bytes := map[string]uint64{}
	if _, err := pcapflows.ReadFile(context.Background(), files[0], pcapflows.Options{Observe: func(pk *pcapflows.Packet) {
		if pk.NewBytes == 0 {
			return
		}
		src := pk.Src.String()
		if _, ok := first[src]; !ok {
			first[src] = pk.Time
		}
		if pk.Time-first[src] < 40e6 {
			bytes[src] += uint64(pk.NewBytes)
		}
	}}); err != nil {
		t.Fatal(err)
	}
	rates := map[string]float64{}
	for src, b := range bytes {
		rates[src] = float64(b) * 8 / 0.04 / 1e6
	}
	addr := map[string]string{} // entry -> its sender's address
	for _, f := range rj.Workload {
		for _, n := range rj.Topology.Nodes {
			if n.Name == f.Src {
				addr[f.Group] = n.Addr
			}
		}
	}
	slow, fast := rates[addr["slow"]], rates[addr["fast"]]
	t.Logf("first 40 ms: slow %.0f Mbit/s, fast %.0f Mbit/s (%v)", slow, fast, rates)
	if slow < 70 || slow > 140 {
		t.Errorf("the flow started at 100 Mbit/s sent %.0f Mbit/s in its first 40 ms", slow)
	}
	if fast < 3*slow {
		t.Errorf("the flow started at the line sent %.0f Mbit/s, the one at 100 Mbit/s %.0f", fast, slow)
	}
}
