package layers

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// graph reads the non-test imports of every package of the module below
// root with go/build (cgo and build tags as this machine builds them).
func graph(t *testing.T, root string) map[string][]string {
	t.Helper()
	g := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		switch d.Name() {
		case ".git", "build", "results", "testdata", "bin", "node_modules":
			return filepath.SkipDir
		}
		if strings.HasPrefix(d.Name(), ".") && path != root {
			return filepath.SkipDir
		}
		p, err := build.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, path)
		name := "cclab"
		if rel != "." {
			name += "/" + filepath.ToSlash(rel)
		}
		for _, imp := range p.Imports {
			if imp == "cclab" || strings.HasPrefix(imp, "cclab/") {
				g[name] = append(g[name], imp)
			}
		}
		if _, ok := g[name]; !ok {
			g[name] = nil
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// The module's imports point down (docs/architecture.md, "Layers").
func TestLayers(t *testing.T) {
	root, _ := filepath.Abs("../..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	g := graph(t, root)
	// Every rule must have packages on its left: a renamed folder would
	// otherwise make it pass by matching nothing.
	for _, r := range Rules {
		n := 0
		for pkg := range g {
			if r.From(pkg) {
				n++
			}
		}
		if n == 0 {
			t.Errorf("rule %q matches no package", r.Why)
		}
	}
	// Every package a rule names exists, and a known import is seen: a
	// renamed folder or module would otherwise make the rules vacuous.
	for _, p := range []string{"cclab/analysis/report", "cclab/orchestrator/runner", "cclab/rundir", "cclab/topology",
		"cclab/reproduce", "cclab/cmd/cclab", "cclab/tcopt/intswitch", "cclab/tcopt/agent", "cclab/kmod/lawload",
		"cclab/kmod/bpf", "cclab/kmod/law/bpfcheck", "cclab/kmod/law", "cclab/tcopt"} {
		if _, ok := g[p]; !ok {
			t.Errorf("package %s not found: the walk or a rule is broken", p)
		}
	}
	if !slices.Contains(g["cclab/analysis/report"], "cclab/rundir") {
		t.Errorf("analysis/report's imports %v lack cclab/rundir: the graph is wrong", g["cclab/analysis/report"])
	}
	for _, v := range Check(g, Rules) {
		t.Error(v)
	}
}

// Check reports exactly the imports that break a rule.
func TestCheckFlagsUpwardImports(t *testing.T) {
	g := map[string][]string{
		"cclab/analysis/report":     {"cclab/rundir", "cclab/orchestrator/runner"},
		"cclab/topology":            {"cclab/internal/units"},
		"cclab/rundir":              {"cclab/topology", "cclab/tcopt/intswitch"},
		"cclab/orchestrator/runner": {"cclab/rundir", "cclab/reproduce"},
		"cclab/cmd/cclab":           {"cclab/reproduce"},
		"cclab/internal/quiettest":  {"cclab/orchestrator/health"},
		"cclab/kmod/lawload":        {"cclab/kmod/bpf", "cclab/orchestrator/runner"},
		"cclab/kmod/law":            {"cclab/kmod/lawload"},
		"cclab/internal/tcx":        {"cclab/kmod/bpf"},
		"cclab/tcopt/intswitch":     {"cclab/topology", "cclab/analysis/series"},
	}
	got := Check(g, Rules)
	want := []string{
		"cclab/analysis/report imports cclab/orchestrator/runner",
		"cclab/internal/quiettest imports cclab/orchestrator/health",
		"cclab/internal/tcx imports cclab/kmod/bpf",
		"cclab/kmod/law imports cclab/kmod/lawload",
		"cclab/kmod/lawload imports cclab/orchestrator/runner",
		"cclab/orchestrator/runner imports cclab/reproduce",
		"cclab/rundir imports cclab/tcopt/intswitch",
		"cclab/tcopt/intswitch imports cclab/analysis/series",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d violations:\n%s\nwant %d", len(got), strings.Join(got, "\n"), len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]+":") {
			t.Errorf("violation %d: %s, want %s", i, got[i], want[i])
		}
	}
}
