package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"cclab/orchestrator/calibrate"
	"cclab/orchestrator/experiment"
	"cclab/orchestrator/fidelity"
	"cclab/orchestrator/linkchange"
	"cclab/rundir"
	"cclab/topology"
)

// run.json as the runner writes it reads back as rundir.Info, field for
// field: the contract between the orchestrator and every reader.
func TestRunJSONReadsAsInfo(t *testing.T) {
	plan, err := topology.Load("../../topologies/line-3.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rj := RunJSON{ID: "r1", Variant: "hpcc", Started: "2026-11-26T00:00:00Z", Finished: "2026-11-26T00:00:09Z",
		ClockOffsetNs: 17, ZeroNs: 42, Seed: 3,
		Experiment: ExperimentJSON{Experiment: &experiment.Experiment{Name: "x", Topology: "../topologies/line-3.yaml"}, Source: "name: x"},
		Topology:   plan, Framing: rundir.Framing{MSS: 1408, HeaderBytes: 106},
		CC:     map[string]rundir.CC{"hpcc": {Flows: 2, Params: map[string]any{"eta": 0.95}, Build: rundir.BuildEBPF}},
		Kernel: rundir.Kernel{Release: "6.12", Version: "#1"}, CaptureDrops: 5,
		Flows: rundir.FlowCounts{Total: 2, OK: 1, Failed: 1}, Errors: []string{"oops"},
		Fidelity:    fidelity.Verdict{Verdict: fidelity.Degraded, Reasons: []string{"cpu: busy"}},
		Interrupted: &rundir.Interrupted{Signal: "SIGHUP", At: "2026-11-26T00:00:08Z", Cause: "interrupted by SIGHUP"},
		Calibration: &calibrate.Result{Classes: []calibrate.Class{{Switches: 3, FloorNs: 8_450_000}}},
		Extensions: map[string]any{"link_events": LinkEventsJSON{Changes: []linkchange.Record{{
			Request: linkchange.Request{Target: "s0:s1", Rate: "400Mbit"}, Links: []string{"s0:s1"}, InForce: 99, At: 7}}}},
	}
	dir := t.TempDir()
	if err := writeJSON(filepath.Join(dir, rundir.RunJSON), rj); err != nil {
		t.Fatal(err)
	}
	ri, err := rundir.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := rundir.Info{ID: rj.ID, Topology: plan, CC: rj.CC, Variant: rj.Variant, Started: rj.Started, Finished: rj.Finished,
		ClockOffsetNs: 17, ZeroNs: 42, Seed: 3, Framing: &rj.Framing, Kernel: rj.Kernel, CaptureDrops: 5,
		Flows: rj.Flows, Errors: rj.Errors, Fidelity: &rundir.Fidelity{Verdict: fidelity.Degraded, Reasons: []string{"cpu: busy"}},
		Interrupted: rj.Interrupted,
		Calibration: &rundir.Calibration{Classes: []rundir.CalibratedClass{{Switches: 3, FloorNs: 8_450_000}}}}
	want.Extensions.LinkEvents = &struct {
		Changes []rundir.LinkChange `json:"changes"`
	}{Changes: []rundir.LinkChange{{Target: "s0:s1", Links: []string{"s0:s1"}, Rate: "400Mbit", InForce: 99, At: 7}}}
	want.Experiment.Name, want.Experiment.Topology, want.Experiment.Source = "x", "../topologies/line-3.yaml", "name: x"
	// The fixture must set every field of Info, so that a field added to
	// Info without a matching one in RunJSON fails here.
	wv := reflect.ValueOf(want)
	for i := range wv.NumField() {
		name := wv.Type().Field(i).Name
		if wv.Field(i).IsZero() {
			t.Errorf("the fixture leaves rundir.Info.%s unset: give it a value", name)
		}
	}
	// JSON numbers come back as float64; compare the plan and the map
	// through their encodings.
	enc := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	if enc(ri.Topology) != enc(plan) {
		t.Errorf("topology does not read back")
	}
	if enc(ri.CC) != enc(rj.CC) {
		t.Errorf("cc %s, want %s", enc(ri.CC), enc(rj.CC))
	}
	ri.Topology, ri.CC, want.Topology, want.CC = nil, nil, nil, nil
	if !reflect.DeepEqual(*ri, want) {
		t.Errorf("read back\n%+v\nwant\n%+v", *ri, want)
	}
	// A run.json that is not JSON is an error naming the file.
	os.WriteFile(filepath.Join(dir, rundir.RunJSON), []byte("{"), 0o644)
	if _, err := rundir.ReadInfo(dir); err == nil {
		t.Error("a truncated run.json reads without error")
	}
}
