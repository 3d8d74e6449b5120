package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cclab/rundir"
)

// A new run of the same id replaces an interrupted run's directory (a
// variant marked interrupted, or no run.json), never a finished one.
func TestRemoveStaleDirKeepsFinishedRuns(t *testing.T) {
	write := func(dir string, rj RunJSON) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeJSON(filepath.Join(dir, rundir.RunJSON), rj); err != nil {
			t.Fatal(err)
		}
	}
	root := t.TempDir()
	finished := filepath.Join(root, "finished")
	write(finished, RunJSON{ID: "finished"})
	if err := removeStaleDir(finished); err == nil || !strings.Contains(err.Error(), "finished run") {
		t.Fatalf("a finished run was not refused: %v", err)
	}
	// A comparison whose second variant was interrupted.
	cut := filepath.Join(root, "cut")
	write(filepath.Join(cut, "cubic"), RunJSON{ID: "cut"})
	write(filepath.Join(cut, "dctcp"), RunJSON{ID: "cut", Interrupted: &rundir.Interrupted{Signal: "SIGINT"}})
	leftovers := filepath.Join(root, "leftovers")
	os.MkdirAll(filepath.Join(leftovers, "pcap"), 0o755)
	for _, d := range []string{cut, leftovers} {
		if err := removeStaleDir(d); err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s was not removed", d)
		}
	}
	if _, err := os.Stat(finished); err != nil {
		t.Error("the finished run is gone")
	}
}
