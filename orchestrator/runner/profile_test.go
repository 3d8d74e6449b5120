package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"cclab/analysis/cpucost"
)

// `profile: true` on a real run: perf samples every CPU over the workload,
// the samples are classified, cpu_cost.json holds the packet's stages with
// time in them, run.json records the extension, and perf is gone after.
func TestProfileRun(t *testing.T) {
	exp := writeExperiment(t, "star-16.yaml", `seed: 3
timeout: 10s
profile: true
switch: {int: true, int_all: true}
workload:
  - name: incast
    incast: {dst: h0, fan_in: 8, size: 2MB, start: 10ms, stagger: 20us, per_stagger: 2}
`)
	res, dir := runExperiment(t, exp)
	if res.Runs[0].OK != 8 {
		t.Fatalf("result %+v", res.Runs[0])
	}
	var b cpucost.Breakdown
	data, err := os.ReadFile(filepath.Join(dir, CPUCostFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatal(err)
	}
	if b.Samples < 100 || b.Seconds < 0.5 {
		t.Fatalf("%d samples over %.2f s", b.Samples, b.Seconds)
	}
	got := map[cpucost.Stage]float64{}
	for _, r := range b.Rows {
		got[r.Stage] = r.Total
	}
	// 16 MB through the star's switch with INT: the switch's programs,
	// the qdiscs and the hosts' TCP all took time.
	for _, st := range []cpucost.Stage{cpucost.StageSwitchBPF, cpucost.StageQdisc, cpucost.StageTCP} {
		if got[st] <= 0 {
			t.Errorf("no time in %s: %v", st, got)
		}
	}
	var rj struct {
		Extensions struct {
			Profile ProfileJSON `json:"profile"`
		} `json:"extensions"`
	}
	readRunJSON(t, dir, &rj)
	pj := rj.Extensions.Profile
	if pj.File != CPUCostFile || pj.Samples != b.Samples || len(pj.PacketShare) != b.CPUs {
		t.Errorf("run.json extensions.profile %+v", pj)
	}
	if _, err := os.Stat(filepath.Join(dir, CPUCostText)); err != nil {
		t.Error(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, PerfDataFile)); err != nil || fi.Size() == 0 {
		t.Errorf("perf.data: %v", err)
	}
}
