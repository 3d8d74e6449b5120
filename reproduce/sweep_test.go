package reproduce

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cclab/orchestrator/runner"
	"cclab/rundir"
)

// copyRoot is a repository holding only the smoke experiment and its
// topology, whose file a test may change.
func copyRoot(t *testing.T) string {
	t.Helper()
	top := t.TempDir()
	for _, f := range []string{filepath.Join(Dir, "smoke.yaml"), filepath.Join("topologies", "repro-star-2-1ms.yaml")} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(top, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(top, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return top
}

// A plan lists one task per experiment and seed with the file's hash and
// the build; run-one refuses a plan of another build or a changed file
// before it runs anything, and a task index out of range.
func TestPlanRefusesAnotherBuildOrFile(t *testing.T) {
	r := copyRoot(t)
	out := filepath.Join(t.TempDir(), "sweep")
	p, err := MakePlan([]string{"smoke"}, PlanOptions{Root: r, Out: out, Revision: "abc", Seeds: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tasks) != 4 || p.Tasks[3].Seed != 4 || p.Tasks[3].Index != 3 || len(p.Experiments[0].SHA256) != 64 {
		t.Fatalf("plan %+v", p)
	}
	if err := p.Write(); err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(out, PlanFile)
	ctx := context.Background()
	lock := RunOneOptions{Revision: "def", LockPath: filepath.Join(t.TempDir(), "lock")}
	if _, _, err := RunOne(ctx, plan, 0, lock); err == nil || !strings.Contains(err.Error(), `revision "abc", this is "def"`) {
		t.Errorf("another build: %v", err)
	}
	lock.Revision = "abc"
	if _, _, err := RunOne(ctx, plan, 4, lock); err == nil || !strings.Contains(err.Error(), "tasks 0-3") {
		t.Errorf("index 4: %v", err)
	}
	f := filepath.Join(r, Dir, "smoke.yaml")
	if err := os.WriteFile(f, append(must(os.ReadFile(f)), []byte("# changed\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := RunOne(ctx, plan, 0, lock); err == nil || !strings.Contains(err.Error(), "changed since the plan") {
		t.Errorf("changed file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(p.TaskDir(p.Tasks[0]), MarkerFile)); !os.IsNotExist(err) {
		t.Errorf("a refused task left a marker: %v", err)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// The gather reports what is missing, refuses a marker of another plan
// and a corrupt one by its file, and judges what finished.
func TestGatherReportsMissingAndRefused(t *testing.T) {
	r := copyRoot(t)
	out := filepath.Join(t.TempDir(), "sweep")
	p, err := MakePlan([]string{"smoke"}, PlanOptions{Root: r, Out: out, Seeds: 3})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(); err != nil {
		t.Fatal(err)
	}
	_, id, err := ReadPlan(filepath.Join(out, PlanFile))
	if err != nil {
		t.Fatal(err)
	}
	write := func(task Task, body []byte) string {
		path := filepath.Join(p.TaskDir(task), MarkerFile)
		if err := atomicWrite(path, body); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := Marker{Plan: id, Task: p.Tasks[0], Node: rundir.Node{Hostname: "n1"}, Faithful: false,
		Run: RunOutcome{Seed: 1, Variants: []VariantOutcome{{CC: "cubic", Status: "ran", Fidelity: "degraded: CPU stolen", Metrics: Metrics{"recovery_rtts": 3}}}}}
	write(p.Tasks[0], must(json.Marshal(good)))
	other := good
	other.Plan, other.Task = strings.Repeat("0", 64), p.Tasks[1]
	otherPath := write(p.Tasks[1], must(json.Marshal(other)))
	corrupt := write(p.Tasks[2], []byte(`{"plan": "x", "task": `))
	rep, err := Gather(filepath.Join(out, PlanFile), filepath.Join(out, "docs"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Done != 1 || len(rep.Missing) != 0 || len(rep.Degraded) != 1 || rep.Degraded[0].Node != "n1" ||
		!strings.Contains(rep.Degraded[0].Why, "CPU stolen") || rep.Nodes["n1"] != 1 {
		t.Errorf("report %+v", rep)
	}
	refused := strings.Join(rep.Refused, "\n")
	if len(rep.Refused) != 2 || !strings.Contains(refused, otherPath+": a marker of another plan") || !strings.Contains(refused, corrupt+" is corrupt") {
		t.Errorf("refused:\n%s", refused)
	}
	if c := rep.Outcomes[0].Claims[0]; c.Verdict != DegradedRuns {
		t.Errorf("the one run is degraded: %s", c.Verdict)
	}
	os.Remove(otherPath)
	os.Remove(corrupt)
	rep, err = Gather(filepath.Join(out, PlanFile), "")
	if err != nil || len(rep.Missing) != 2 || rep.Missing[0].Seed != 2 {
		t.Errorf("missing: %+v %v", rep, err)
	}
}

// --flows picks the fewest seeds whose planned workloads give every
// per-flow claim that many flows in its class.
func TestPlanSeedsForFlows(t *testing.T) {
	p, err := MakePlan([]string{"websearch-20"}, PlanOptions{Root: root, Out: t.TempDir(), Flows: 60})
	if err != nil {
		t.Fatal(err)
	}
	exps, err := Find(root, []string{"websearch-20"})
	if err != nil {
		t.Fatal(err)
	}
	count := func(seeds []int64) map[string]int {
		pr, err := runner.Prepare(filepath.Join(root, exps[0].File))
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]int{}
		for _, s := range seeds {
			ps, err := pr.Reseed(s)
			if err != nil {
				t.Fatal(err)
			}
			for m, n := range plannedFlows(exps[0], ps) {
				have[m] += n
			}
		}
		return have
	}
	seeds := p.Experiments[0].Seeds
	if all, fewer := count(seeds), count(seeds[:len(seeds)-1]); all["short_slowdown"] < 60 || all["medium_slowdown"] < 60 ||
		(fewer["short_slowdown"] >= 60 && fewer["medium_slowdown"] >= 60) {
		t.Errorf("%d seeds: %v; one fewer: %v", len(seeds), all, fewer)
	}
	if _, err := MakePlan([]string{"smoke"}, PlanOptions{Root: root, Out: t.TempDir(), Flows: 10}); err == nil || !strings.Contains(err.Error(), "give --seeds") {
		t.Errorf("smoke has no per-flow claim: %v", err)
	}
	// In the whole suite, an experiment without per-flow claims keeps its
	// own seeds.
	all, err := MakePlan([]string{"all"}, PlanOptions{Root: root, Out: t.TempDir(), Flows: 60})
	if err != nil {
		t.Fatal(err)
	}
	for _, pe := range all.Experiments {
		e, _ := Find(root, []string{pe.Name})
		if !hasFlowClaims(e[0]) && len(pe.Seeds) != len(e[0].Seeds) {
			t.Errorf("%s: %d seeds, its file's %d", pe.Name, len(pe.Seeds), len(e[0].Seeds))
		}
	}
}
