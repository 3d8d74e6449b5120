package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"cclab/kmod/lawload"
	"cclab/rundir"
)

// A compared name cclab does not know is an error at its line, whatever
// skip_missing says; a known one this kernel lacks is skipped, with why.
func TestComparedNames(t *testing.T) {
	body := "compare: [cubic,\n  rneo, reno]\nskip_missing: true\nworkload:\n  - name: l\n    long: {src: h1, dst: h0, stop: 1s}\n"
	path := writeExperiment(t, "star-16.yaml", body)
	_, err := Prepare(path)
	if err == nil || !strings.Contains(err.Error(), path+`:4: compare: "rneo" is no congestion control cclab knows (did you mean reno?)`) {
		t.Fatalf("a typo under skip_missing: %v", err)
	}
	missing := unavailableKernelCCs(t)[0]
	p, err := Prepare(writeExperiment(t, "star-16.yaml", "compare: [cubic, "+missing+", reno]\nskip_missing: true\nworkload:\n  - name: l\n    long: {src: h1, dst: h0, stop: 1s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Variants) != 2 || p.Variants[1].CC != "reno" || len(p.Skipped) != 1 || p.Skipped[0].CC != missing ||
		!strings.Contains(p.Skipped[0].Reason, "modprobe tcp_"+missing) {
		t.Fatalf("variants %+v skipped %+v", p.Variants, p.Skipped)
	}
	// Without skip_missing, the name this kernel lacks is an error at its line.
	path = writeExperiment(t, "star-16.yaml", "compare:\n  - cubic\n  - "+missing+"\nworkload:\n  - name: l\n    long: {src: h1, dst: h0, stop: 1s}\n")
	if _, err := Prepare(path); err == nil || !strings.Contains(err.Error(), path+":5: congestion control \""+missing+"\" is not loaded") {
		t.Fatalf("a missing kernel CC without skip_missing: %v", err)
	}
	// Known names that are all missing leave nothing to run.
	two := unavailableKernelCCs(t)[:2]
	path = writeExperiment(t, "star-16.yaml", "compare: ["+strings.Join(two, ", ")+"]\nskip_missing: true\nworkload:\n  - name: l\n    long: {src: h1, dst: h0, stop: 1s}\n")
	if _, err := Prepare(path); err == nil || !strings.Contains(err.Error(), "none of the compared congestion controls is loaded ("+strings.Join(two, ", ")+")") {
		t.Fatalf("every compared name missing: %v", err)
	}
	// A variant of the file is known (its law is registered by the run).
	if _, err := Prepare(writeExperiment(t, "star-16.yaml", "compare: [cubic, hpcc_x]\nlaws: {}\nvariants:\n  hpcc_x: {law: hpcc}\nworkload:\n  - name: l\n    long: {src: h1, dst: h0, stop: 1s}\n")); err != nil {
		t.Fatalf("a declared variant: %v", err)
	}
}

// unavailableKernelCCs are the kernel's own congestion controls that this
// kernel does not have registered now (at least two, or the test skips).
func unavailableKernelCCs(t *testing.T) []string {
	t.Helper()
	avail, err := lawload.Available()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range lawload.KernelCCs() {
		if !slices.Contains(avail, k) {
			out = append(out, k)
		}
	}
	if len(out) < 2 {
		t.Skipf("the kernel congestion controls lacking here are too few: %v", out)
	}
	return out
}

// A real run with a skipped name says so in its summary, compare.json and
// each variant's run.json.
func TestSkippedInRunRecords(t *testing.T) {
	missing := unavailableKernelCCs(t)[0]
	p, id := prepareRun(t, writeExperiment(t, "repro-star-2.yaml", "compare: [cubic, "+missing+"]\nskip_missing: true\nemulation: {calibrate: false}\ncapture: {enabled: false}\nworkload:\n  - name: l\n    long: {src: h1, dst: h0, stop: 100ms}\n"))
	out := t.TempDir()
	res, err := Run(t.Context(), p, Options{Out: out, ID: id, RTTSamples: 5})
	if err != nil {
		t.Fatal(err)
	}
	noLeftovers(t, id)
	if len(res.Skipped) != 1 || res.Skipped[0].CC != missing {
		t.Fatalf("result skipped %+v", res.Skipped)
	}
	for _, f := range []string{filepath.Join(res.Dir, "compare.json"), filepath.Join(res.Dir, "cubic", rundir.RunJSON)} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var rec struct{ Skipped []Skip }
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatal(err)
		}
		if len(rec.Skipped) != 1 || rec.Skipped[0].CC != missing || rec.Skipped[0].Reason == "" {
			t.Errorf("%s: skipped %+v", f, rec.Skipped)
		}
	}
}
