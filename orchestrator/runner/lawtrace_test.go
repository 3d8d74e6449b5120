package runner

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"cclab/internal/runid"
	"cclab/kmod/lawload"
	"cclab/rundir"
)

// A run with `trace: true` on cclab's DCTCP (registered under a test-only
// name: registrations are machine-wide) writes the law's per-ACK trace
// into cc_trace.csv, and run.json records the law's parameters in force.
func TestLawTraceRun(t *testing.T) {
	id := runid.New()
	cleanAfter(t, id)
	name := "t" + string(id) + "_dctcp"
	// A pin directory apart from the run's: the run cleans its own first.
	opts := lawload.Options{PinDir: runid.New().BPFDir(), Names: map[string]string{"dctcp": name}}
	if _, err := lawload.Load(context.Background(), []string{"dctcp"}, nil, opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := lawload.Unload(nil, opts); err != nil {
			t.Errorf("unload: %v", err)
		}
		os.Remove(opts.PinDir)
	})
	exp := writeExperiment(t, "star-16.yaml", "cc: "+name+`
trace: true
timeout: 20s
hosts: {gso: false, tso: false, gro: false}
workload:
  - name: incast
    incast: {dst: h0, fan_in: 2, size: 300KB}
`)
	out := runTwoFlowIncast(t, exp, id, opts)
	dir := filepath.Join(out, string(id))
	rows := readCSV(t, filepath.Join(dir, "cc_trace.csv"))
	if len(rows) < 50 {
		t.Fatalf("cc_trace.csv has %d rows; 600 KB of DCTCP should give hundreds of ACKs", len(rows))
	}
	var lastCwnd int
	var err error
	for _, r := range rows[1:] {
		if r[2] != "dctcp" { // the trace names the law, whatever its registered name
			t.Fatalf("trace row of another control: %v", r)
		}
		if lastCwnd, err = strconv.Atoi(r[3]); err != nil || lastCwnd <= 0 {
			t.Fatalf("bad cwnd in %v", r)
		}
		// Not paced (empty) or a rate below 100 Gbit/s, never a wrapped one.
		if pace, err := strconv.ParseUint(r[4], 10, 64); r[4] != "" && (err != nil || pace > 100e9) {
			t.Fatalf("bad pacing rate in %v", r)
		}
	}
	var rj struct {
		CC         map[string]rundir.CC `json:"cc"`
		Extensions struct {
			Trace lawload.TraceStats `json:"cc_trace"`
		} `json:"extensions"`
	}
	readRunJSON(t, dir, &rj)
	if c := rj.CC[name]; c.Flows != 2 || len(c.Params) == 0 {
		t.Fatalf("run.json cc entry %+v: want 2 flows and the law's parameters", c)
	}
	if rj.Extensions.Trace.Records != uint64(len(rows)-1) {
		t.Fatalf("trace stats %+v, csv rows %d", rj.Extensions.Trace, len(rows)-1)
	}
	t.Logf("%d trace rows, params %v", len(rows)-1, rj.CC[name].Params)
}

// runTwoFlowIncast runs an experiment whose workload is a 2-flow incast,
// with the laws' pin options opts, and returns its output directory; both
// flows must complete.
func runTwoFlowIncast(t *testing.T, exp string, id runid.ID, opts lawload.Options) string {
	t.Helper()
	p, err := Prepare(exp)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	res, err := Run(context.Background(), p, Options{Out: out, ID: id, Log: io.Discard, RTTSamples: 20, Laws: opts})
	if err != nil {
		t.Fatal(err)
	}
	if res.Runs[0].OK != 2 {
		t.Fatalf("flows %+v", res.Runs[0])
	}
	return out
}
