package runner

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Every experiment cclab ships passes Check: its file, topology, law
// settings and every variant's flows.
func TestCheckShippedExperiments(t *testing.T) {
	var files []string
	err := filepath.WalkDir("../../experiments", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".yaml") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 20 {
		t.Fatalf("found %d experiment files: %v", len(files), files)
	}
	for _, f := range files {
		if _, err := Check(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// Check judges the file, not the machine: a congestion control cclab knows
// counts as present whether this kernel has it or not, a name it does not
// know is refused at its line, and so are the flows' problems.
func TestCheckJudgesTheFile(t *testing.T) {
	body := "compare: [bbr, hpcc, hv]\nvariants:\n  hv: {law: hpcc, set: {eta_ppm: 900000}}\nworkload:\n  - name: l\n    long: {src: h1, dst: h0, stop: 1s}\n"
	p, err := Check(writeExperiment(t, "star-16.yaml", body))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Variants) != 3 || len(p.Skipped) != 0 {
		t.Fatalf("variants %+v, skipped %+v", p.Variants, p.Skipped)
	}
	for _, c := range []struct{ from, to, want string }{
		{"bbr", "bbrr", `exp.yaml:3: compare: "bbrr" is no congestion control cclab knows`},
		{"src: h1", "src: h99", "exp.yaml:8: "},
		{"eta_ppm: 900000", "eta_ppm: 5", "exp.yaml:5:3: variant hv: hpcc eta_ppm=5 ppm: outside its range"},
	} {
		_, err := Check(writeExperiment(t, "star-16.yaml", strings.Replace(body, c.from, c.to, 1)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q -> %q: %v, want an error saying %q", c.from, c.to, err, c.want)
		}
	}
}

// The flows' problems of every compared name are reported together, each
// at the line of the workload entry it is about.
func TestCheckReportsEveryFlowProblem(t *testing.T) {
	body := "compare: [dctcp, qcn]\nswitch: {int: true}\nworkload:\n  - name: i\n    tool: iperf3\n    long: {src: h1, dst: h0, stop: 1s}\n  - name: l\n    long: {src: h2, dst: h0, stop: 1s}\n"
	_, err := Check(writeExperiment(t, "star-16.yaml", body))
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		`exp.yaml:6: dctcp runs iperf3 flows (workload entry "i")`,
		`exp.yaml:6: qcn's run has qcn flows (workload entry "i") and no QCN congestion point`,
		`exp.yaml:9: qcn's run has qcn flows (workload entry "l") and no QCN congestion point`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
}
