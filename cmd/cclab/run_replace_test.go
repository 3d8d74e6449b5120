package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cclab/internal/runid"
	"cclab/orchestrator/cleanup"
)

// `cclab run --run ID` refuses an id that is up and leaves it alone;
// --replace tears it down and runs. `cclab clean` without --run or --all
// refuses and touches nothing. Real namespaces.
func TestRunRefusesLiveID(t *testing.T) {
	id := runid.New()
	t.Cleanup(func() { cleanup.Clean(context.Background(), id) })
	topo, err := filepath.Abs("../../topologies/repro-star-2.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := runCclab(t, "topo", "up", "--run", string(id), topo); err != nil {
		t.Fatalf("topo up: %v\n%s", err, out)
	}
	ns, _ := cleanup.Namespaces(id)
	if len(ns) == 0 {
		t.Fatal("no namespaces after topo up")
	}
	exp := filepath.Join(t.TempDir(), "exp.yaml")
	body := "name: live\ntopology: " + topo + "\nemulation: {calibrate: false}\ncapture: {enabled: false}\nworkload:\n  - name: l\n    long: {src: h1, dst: h0, stop: 100ms}\n"
	if err := os.WriteFile(exp, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	_, err = runCclab(t, "run", "--quiet", "--out", out, "--run", string(id), exp)
	if err == nil || !strings.Contains(err.Error(), "run id "+string(id)+" is up") || !strings.Contains(err.Error(), "--replace") {
		t.Fatalf("run over a live id: %v", err)
	}
	if now, _ := cleanup.Namespaces(id); len(now) != len(ns) {
		t.Fatalf("the refused run touched the live topology: %d namespaces, had %d", len(now), len(ns))
	}
	_, err = runCclab(t, "clean")
	if err == nil || !strings.Contains(err.Error(), "--all") || !strings.Contains(err.Error(), "--run ID") {
		t.Fatalf("clean without --run or --all: %v", err)
	}
	if _, err := runCclab(t, "clean", "--all", "--run", string(id)); err == nil {
		t.Fatal("clean --all --run succeeded")
	}
	if now, _ := cleanup.Namespaces(id); len(now) != len(ns) {
		t.Fatalf("a refused clean touched the live topology: %d namespaces, had %d", len(now), len(ns))
	}
	if msg, err := runCclab(t, "run", "--quiet", "--out", out, "--run", string(id), "--replace", exp); err != nil {
		t.Fatalf("run --replace: %v\n%s", err, msg)
	}
	if left, err := cleanup.InUse(id); err != nil || len(left) > 0 {
		t.Fatalf("after run --replace: %v left (%v)", left, err)
	}
	if _, err := os.Stat(filepath.Join(out, string(id), "flows.csv")); err != nil {
		t.Fatalf("run --replace wrote no flows.csv: %v", err)
	}
}
