package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"cclab/internal/runid"
	"cclab/orchestrator/cleanup"
	"cclab/orchestrator/netbuild"
)

// A topology brought up from a file comes down by naming the same file,
// every run of it; naming it again when none is up is an error, as is
// giving neither a file nor --run. Real namespaces.
func TestTopoDownFile(t *testing.T) {
	// A copy of its own, so that runs of the same file by others do not count.
	src, err := os.ReadFile("../../topologies/dumbbell.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "dumbbell.yaml")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	ids := []runid.ID{runid.New(), runid.New()}
	for _, id := range ids {
		t.Cleanup(func() { (&netbuild.Network{ID: id}).Down(context.Background()) })
		if out, err := runCclab(t, "topo", "up", "--run", string(id), file); err != nil {
			t.Fatalf("topo up: %v\n%s", err, out)
		}
		if _, err := os.Stat(filepath.Join(cleanup.NetnsDir, id.Prefix()+"h0")); err != nil {
			t.Fatalf("run %s: no namespace h0 after topo up: %v", id, err)
		}
	}
	if out, err := runCclab(t, "topo", "down", file); err != nil {
		t.Fatalf("topo down FILE: %v\n%s", err, out)
	}
	for _, id := range ids {
		if _, err := os.Stat(id.StateDir()); !os.IsNotExist(err) {
			t.Errorf("run %s: state directory left after topo down FILE (%v)", id, err)
		}
		m, _ := filepath.Glob(filepath.Join(cleanup.NetnsDir, id.Prefix()+"*"))
		if len(m) > 0 {
			t.Errorf("run %s: namespaces left: %v", id, m)
		}
	}
	if _, err := runCclab(t, "topo", "down", file); err == nil {
		t.Error("topo down FILE with nothing of it up succeeded")
	}
	if _, err := runCclab(t, "topo", "down"); err == nil {
		t.Error("topo down with neither FILE nor --run succeeded")
	}
}
