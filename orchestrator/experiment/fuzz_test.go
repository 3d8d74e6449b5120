package experiment

import (
	"os"
	"path/filepath"
	"testing"

	"cclab/internal/yamlerr/yamlerrtest"
)

// shipped is every experiment file of the repository.
func shipped(tb testing.TB) []string {
	var files []string
	for _, g := range []string{"../../experiments/*.yaml", "../../experiments/reproduce/*.yaml"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if len(files) < 10 {
		tb.Fatalf("found %d experiment files", len(files))
	}
	return files
}

// FuzzParse: no input panics, and every error names its position
// (file:line, with the column where known). Seeds: the shipped
// experiments. `make test` runs it for a few seconds
// (docs/experiments.md, "Fuzzing the file readers").
func FuzzParse(f *testing.F) {
	for _, file := range shipped(f) {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if e, err := Parse("f.yaml", data); err != nil {
			yamlerrtest.Positioned(t, "f.yaml", err)
		} else if len(e.Workload) == 0 {
			t.Fatalf("no error and no workload: %+v", e)
		}
	})
}

// Every shipped experiment parses and its topology loads.
func TestShippedExperiments(t *testing.T) {
	for _, file := range shipped(t) {
		e, err := Load(file)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if _, err := e.LoadTopology(); err != nil {
			t.Errorf("%v", err)
		}
	}
}
