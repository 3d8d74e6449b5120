package topology

import (
	"os"
	"path/filepath"
	"testing"

	"cclab/internal/yamlerr/yamlerrtest"
)

// FuzzParse: no input panics, and every error names its position
// (file:line, with the column where known). Seeds: the shipped
// topologies. `make test` runs it for a few seconds
// (docs/experiments.md, "Fuzzing the file readers").
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../topologies/*.yaml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if p, err := Parse("t.yaml", data); err != nil {
			yamlerrtest.Positioned(t, "t.yaml", err)
		} else if len(p.Nodes) == 0 {
			t.Fatalf("no error and no nodes: %+v", p)
		}
	})
}
