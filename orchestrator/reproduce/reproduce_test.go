package reproduce

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"cclab/orchestrator/experiment"
	"cclab/orchestrator/runner"
)

const root = "../.."

// The smoke experiment runs for real (namespaces, kernel TCP with cubic,
// captures), is analysed, judged and published; the page fragment must
// carry the numbers of that run.
func TestSmokeEndToEnd(t *testing.T) {
	exps, err := Find([]string{"smoke"})
	if err != nil {
		t.Fatal(err)
	}
	out, docs := t.TempDir(), t.TempDir()
	begin := time.Now()
	outs, err := Run(context.Background(), exps, Options{Root: root, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("smoke ran in %v", time.Since(begin))
	o := outs[0]
	if o.Error != "" || len(o.Variants) != 1 || o.Variants[0].Status != "ran" {
		t.Fatalf("outcome: error %q variants %+v", o.Error, o.Variants)
	}
	v := o.Variants[0]
	for _, f := range []string{"run.json", "flows.csv", "analysis/summary.json", "analysis/report.md", "analysis/figures/throughput.png"} {
		if _, err := os.Stat(filepath.Join(v.Dir, f)); err != nil {
			t.Errorf("run directory: %v", err)
		}
	}
	if v.Health == nil || v.Health.Flows != 2 || v.Health.FlowsFailed != 0 || v.Health.RTTMedianNs <= 0 {
		t.Errorf("health from run.json: %+v", v.Health)
	}
	rec, fct := v.Metrics.Get("recovery"), v.Metrics.Get("short_fct")
	// 500 KB at 100 Mbit/s cannot finish in under 40 ms.
	if math.IsNaN(rec) || rec < 0 || math.IsNaN(fct) || fct < 40e6 {
		t.Errorf("metrics %v", v.Metrics)
	}
	c := o.Claims[0]
	if c.Verdict != Agrees && c.Verdict != Disagrees {
		t.Fatalf("claim verdict %q (%s)", c.Verdict, c.Reason)
	}
	if err := Publish(outs, docs); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(docs, ResultsPage))
	if err != nil {
		t.Fatal(err)
	}
	want := format(Metric{Unit: "ms"}, fct)
	for _, s := range []string{"## smoke:", "| short flow FCT (ms) | " + want + " |", c.Measured, "results/smoke/cubic-throughput.png"} {
		if !strings.Contains(string(page), s) {
			t.Errorf("results page lacks %q:\n%s", s, page)
		}
	}
	if _, err := os.Stat(filepath.Join(docs, "results", "smoke", "cubic-throughput.png")); err != nil {
		t.Error(err)
	}
	health, err := os.ReadFile(filepath.Join(docs, ReproductionPage))
	if err != nil || !strings.Contains(string(health), "| smoke | cubic |") {
		t.Errorf("health section: %v\n%s", err, health)
	}
	// Regenerating from the store alone (cclab reproduce --page-only)
	// gives the same page, and keeps the health section's markers.
	if err := Publish(nil, docs); err != nil {
		t.Fatal(err)
	}
	again, err := os.ReadFile(filepath.Join(docs, ResultsPage))
	if err != nil || !bytes.Equal(again, page) {
		t.Errorf("page regenerated from the store differs: %v\n%s", err, again)
	}
}

// Every registered experiment's file parses, compares exactly the
// congestion controls the registry expects, and its claims read only
// those.
func TestRegistryMatchesFiles(t *testing.T) {
	for _, e := range append(All(), Smoke()) {
		path := filepath.Join(root, "experiments", "reproduce", e.File)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		x, err := experiment.Parse(path, src)
		if err != nil {
			t.Errorf("%s: %v", e.Name, err)
			continue
		}
		ccs := x.Compare
		if len(ccs) == 0 {
			ccs = []string{x.CC}
		}
		var names []string
		for _, n := range e.Needs {
			names = append(names, n.Name)
			if n.Law != "" && len(n.Name) > 15 {
				t.Errorf("%s: %s is longer than a congestion-control name may be", e.Name, n.Name)
			}
		}
		if !slices.Equal(ccs, names) {
			t.Errorf("%s: file compares %v, registry needs %v", e.Name, ccs, names)
		}
		for _, c := range e.Claims {
			for _, cc := range c.Needs {
				if !slices.Contains(names, cc) {
					t.Errorf("%s claim %s reads %s, which the experiment does not run", e.Name, c.ID, cc)
				}
			}
		}
		if e.Name != "smoke" && x.Switch == nil {
			t.Errorf("%s: no switch section", e.Name)
		}
	}
	if _, err := Find([]string{"nope"}); err == nil || !strings.Contains(err.Error(), "hpcc-incast") {
		t.Errorf("unknown name: %v", err)
	}
}

// A law that is not loaded makes its claims "could not run", naming the
// command that loads it; a claim over variants that ran is judged.
func TestJudgeMissingLaw(t *testing.T) {
	e := hpccIncast()
	o := &Outcome{Name: e.Name, Variants: []VariantOutcome{
		{CC: "hpcc", Status: "not loaded", Reason: "not loaded in this kernel; needs `" + e.Needs[0].LoadCommand() + "`"},
		{CC: "cubic", Status: "ran", Metrics: Metrics{"queue_peak": 120e3}},
	}}
	judge(e, o)
	for _, c := range o.Claims {
		if c.Verdict != CouldNotRun || !strings.Contains(c.Reason, "cclab cc load hpcc host_bw_mbps=100") {
			t.Errorf("claim %s: %s (%s)", c.ID, c.Verdict, c.Reason)
		}
	}
	o.Variants[0] = VariantOutcome{CC: "hpcc", Status: "ran", Metrics: Metrics{"queue_peak": 20e3, "drain_rtts": 40}}
	judge(e, o)
	if o.Claims[0].Verdict != Disagrees || o.Claims[1].Verdict != Agrees {
		t.Errorf("claims %+v", o.Claims)
	}
	// The INT law ran without the switch: its claims could not run.
	o.Variants[0].Reason = "switch not active"
	judge(e, o)
	if o.Claims[0].Verdict != CouldNotRun {
		t.Errorf("without the switch: %+v", o.Claims[0])
	}
}

// Prepare accepts every file on this kernel (laws not loaded are skipped).
func TestPrepareAll(t *testing.T) {
	for _, e := range All() {
		p, err := runner.Prepare(filepath.Join(root, "experiments", "reproduce", e.File))
		if err != nil {
			t.Errorf("%s: %v", e.Name, err)
			continue
		}
		if n := len(p.Variants[0].Flows); n == 0 || n > 5000 {
			t.Errorf("%s: %d flows", e.Name, n)
		}
	}
}

// Metrics that could not be measured survive the store as absent values.
func TestMetricsJSONWithoutNaN(t *testing.T) {
	b, err := json.Marshal(Metrics{"a": math.NaN(), "b": 2, "c": math.Inf(1)})
	if err != nil {
		t.Fatal(err)
	}
	var m Metrics
	if err := json.Unmarshal(b, &m); err != nil || !math.IsNaN(m.Get("a")) || m.Get("b") != 2 || !math.IsInf(m.Get("c"), 1) {
		t.Fatalf("%s -> %v %v", b, m, err)
	}
}

// The same seed gives the same workload: every flow's endpoints, size and
// start are identical when an experiment is prepared twice.
func TestSameSeedSameWorkload(t *testing.T) {
	for _, e := range All() {
		path := filepath.Join(root, "experiments", "reproduce", e.File)
		a, err := runner.Prepare(path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := runner.Prepare(path)
		if err != nil {
			t.Fatal(err)
		}
		fa, fb := a.Variants[0].Flows, b.Variants[0].Flows
		if len(fa) != len(fb) {
			t.Fatalf("%s: %d vs %d flows", e.Name, len(fa), len(fb))
		}
		for i := range fa {
			if fa[i].Src != fb[i].Src || fa[i].Dst != fb[i].Dst || fa[i].Size != fb[i].Size || fa[i].Start != fb[i].Start {
				t.Fatalf("%s: flow %d differs: %+v vs %+v", e.Name, i, fa[i], fb[i])
			}
		}
	}
}
