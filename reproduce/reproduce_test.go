package reproduce

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"cclab/internal/testtier"
	"cclab/orchestrator/experiment"
	"cclab/orchestrator/runner"
)

const root = ".."

// The smoke experiment runs for real (namespaces, kernel TCP with cubic,
// captures), is analysed, judged and published; the page fragment must
// carry the numbers of that run.
func TestSmokeEndToEnd(t *testing.T) {
	testtier.Kernel(t)
	exps, err := Find(root, []string{"smoke"})
	if err != nil {
		t.Fatal(err)
	}
	// The smoke claim has no paper number; a copy given one makes the run
	// draw that claim's side-by-side figure (the long flow's throughput,
	// the short flow's end and the "paper's" time after it).
	twenty := 20.0
	numbered := exps[0].Claims[0]
	numbered.ID, numbered.Paper.Value, numbered.Band = "recovery-numbered", &twenty, "factor2"
	v20 := *numbered.Value
	v20.Limit = nil
	numbered.Value = &v20
	exps[0].Claims = append(exps[0].Claims, numbered)
	out, docs := t.TempDir(), t.TempDir()
	begin := time.Now()
	outs, err := Run(context.Background(), exps, Options{Root: root, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("smoke ran in %v", time.Since(begin))
	o := outs[0]
	if o.Error != "" || len(o.Runs) != 3 || len(o.Runs[0].Variants) != 1 || o.Runs[0].Variants[0].Status != "ran" {
		t.Fatalf("outcome: error %q runs %+v", o.Error, o.Runs)
	}
	v := o.Runs[0].Variants[0]
	for _, f := range []string{"run.json", "flows.csv", "analysis/summary.json", "analysis/report.md", "analysis/figures/throughput.png"} {
		if _, err := os.Stat(filepath.Join(v.Dir, f)); err != nil {
			t.Errorf("run directory: %v", err)
		}
	}
	if v.Health == nil || v.Health.Flows != 2 || v.Health.FlowsFailed != 0 || v.Health.RTTMedianNs <= 0 {
		t.Errorf("health from run.json: %+v", v.Health)
	}
	if !strings.HasPrefix(v.Fidelity, "faithful") && !strings.HasPrefix(v.Fidelity, "degraded") {
		t.Errorf("fidelity %q", v.Fidelity)
	}
	rec, fct, rtt := v.Metrics.Get("recovery"), v.Metrics.Get("short_fct"), v.Metrics.Get("base_rtt")
	// 500 KB at 100 Mbit/s cannot finish in under 40 ms; the star's base
	// RTT is 4 ms of propagation and more.
	if math.IsNaN(rec) || rec < 0 || math.IsNaN(fct) || fct < 40e6 || rtt < 4e6 || rtt > 5e6 {
		t.Errorf("metrics %v", v.Metrics)
	}
	c := o.Claims[0]
	// A mean over the three runs, judged against the lab's limit; a run
	// that never recovered makes it not measurable (no mean over a never).
	// A run judged degraded (the shared machine's load) does not count, so
	// the claim is then too few, and only then.
	verdicts := []string{Agrees, Disagrees, Inconclusive, NotMeasurable, DegradedRuns}
	if slices.ContainsFunc(c.Seeds, func(s SeedValue) bool { return !s.Faithful }) {
		verdicts = append(verdicts, TooFew)
	}
	if !slices.Contains(verdicts, c.Verdict) || c.N > 3 {
		t.Fatalf("claim verdict %q (%s), seeds %+v", c.Verdict, c.Reason, c.Seeds)
	}
	if err := Publish(outs, docs); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(docs, ResultsPage))
	if err != nil {
		t.Fatal(err)
	}
	want := Metric{Unit: "ms"}.Format(fct)
	for _, s := range []string{"## smoke:", "| short flow FCT (ms) | " + want + " |", c.Measured(), "results/smoke/cubic-seed1-throughput.png", "- cubic: " + oneLine(v.Fidelity)} {
		if !strings.Contains(string(page), s) {
			t.Errorf("results page lacks %q:\n%s", s, page)
		}
	}
	if _, err := os.Stat(filepath.Join(docs, "results", "smoke", "cubic-seed1-throughput.png")); err != nil {
		t.Error(err)
	}
	side := filepath.Join(docs, "results", "smoke", "cubic-seed1-paper-recovery-numbered.png")
	if f, err := os.Open(side); err != nil {
		t.Errorf("side-by-side figure: %v", err)
	} else {
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width < 300 || cfg.Height < 200 {
			t.Errorf("side-by-side figure %s: %v, %dx%d", side, err, cfg.Width, cfg.Height)
		}
	}
	if !strings.Contains(string(page), "results/smoke/cubic-seed1-paper-recovery-numbered.png") {
		t.Errorf("results page does not show the side-by-side figure")
	}
	health, err := os.ReadFile(filepath.Join(docs, ResultsDir, HealthFile))
	if err != nil || !strings.Contains(string(health), "| smoke | 1 | cubic |") {
		t.Errorf("health page: %v\n%s", err, health)
	}
	// Regenerating from the store alone (cclab reproduce --page-only)
	// gives the same page.
	if err := Publish(nil, docs); err != nil {
		t.Fatal(err)
	}
	again, err := os.ReadFile(filepath.Join(docs, ResultsPage))
	if err != nil || !bytes.Equal(again, page) {
		t.Errorf("page regenerated from the store differs: %v\n%s", err, again)
	}
}

// Every file of the suite loads: its claims read only compared congestion
// controls and metrics of its measure, each names where in the paper it
// stands and quotes it, and `all` holds every experiment but the smoke.
func TestSuiteFilesLoad(t *testing.T) {
	all, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	claims, numbered := 0, 0
	for _, e := range all {
		for _, c := range e.Claims {
			claims++
			if c.Paper.Value != nil {
				numbered++
			}
		}
		if e.Name != "smoke" && len(e.Seeds) < 3 {
			t.Errorf("%s: %d seeds, the suite runs every claim with at least 3", e.Name, len(e.Seeds))
		}
		// theta-PowerTCP runs with the line-rate window HostBw * tau as
		// its cap, as the paper's implementation (kmod/law/README.md):
		// its own 16 MiB default lets one RTT sample at the power floor
		// multiply the window by up to 100.
		path := filepath.Join(root, e.File)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		x, err := experiment.Parse(path, src)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(e.Compare, "theta_powertcp") && x.Laws["theta_powertcp.max_cwnd_bytes"] != "0" {
			t.Errorf("%s: theta_powertcp without max_cwnd_bytes: 0 in laws: (%v)", e.Name, x.Laws)
		}
	}
	t.Logf("%d experiments, %d claims, %d with the paper's number", len(all), claims, numbered)
	exps, err := Find(root, []string{"all"})
	if err != nil || len(exps) != len(all)-1 || slices.ContainsFunc(exps, func(e *Experiment) bool { return e.Name == "smoke" }) {
		t.Errorf("all: %d of %d (%v)", len(exps), len(all), err)
	}
	if _, err := Find(root, []string{"nope"}); err == nil || !strings.Contains(err.Error(), "hpcc-incast") {
		t.Errorf("unknown name: %v", err)
	}
}

// loadSuiteFile writes src as the suite's only file, beside a copy of the
// star topology it names, and loads the suite.
func loadSuiteFile(t *testing.T, src string) (string, error) {
	t.Helper()
	top := t.TempDir()
	dir, tdir := filepath.Join(top, "experiments", "reproduce"), filepath.Join(top, "topologies")
	for _, d := range []string{dir, tdir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(root, "topologies", "repro-star-2-1ms.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tdir, "repro-star-2-1ms.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "x.yaml")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(top)
	return file, err
}

// A claim file with a mistake is refused with its file:line, the claim
// and the reason, before anything runs; every mistaken claim of a file is
// reported in one pass.
func TestSpecErrors(t *testing.T) {
	base := `name: x
topology: ../../topologies/repro-star-2-1ms.yaml
compare: [hpcc, cubic]
workload:
  - name: long
    long: {src: h1, dst: h0, start: 0, stop: 1s}
reproduce:
  title: t
  paper: p
  measure: queue
  group: long
  seeds: [1, 2, 3]
  claims:
    - id: ok
      claim: a claim
      statistic: mean
      n: 3
      band: limit
      paper: {where: "5.2", quote: q}
      value: {cc: hpcc, metric: drain_rtts, bound: at_most, limit: 1}
    - id: c
      claim: a claim
      %s
      paper: {where: "5.2", quote: q%s}
      %s
`
	for _, tc := range []struct{ stat, paper, check, want string }{
		{"statistic: mean\n      n: 3\n      band: limit", "", "value: {cc: dcqcn, metric: queue_peak, bound: at_most, limit: 1}", `"dcqcn" is not compared`},
		{"statistic: mean\n      n: 3\n      band: limit", "", "value: {cc: hpcc, metric: nope, bound: at_most, limit: 1}", `no metric "nope"`},
		{"statistic: mean\n      n: 3\n      band: limit", "", "value: {cc: hpcc, metric: drain_rtts, bound: at_most}", "give value.limit"},
		{"statistic: mean\n      n: 3\n      band: factor2", ", value: 2", "value: {cc: hpcc, metric: drain, bound: about}", "time scale changes"},
		{"statistic: mean\n      n: 3\n      band: factor2", ", value: 2", "value: {cc: hpcc, metric: drain_rtts, bound: about, limit: 3}", "value.limit is for claims"},
		{"statistic: mean\n      n: 3\n      band: factor2", ", value: 2", "ratio: {a: hpcc, b: cubic, metric: queue_peak, direction: below}", "does not point below"},
		{"statistic: mean\n      n: 3\n      band: direction", "", "ratio: {a: hpcc, b: cubic, metric: queue_peak}", "below or above"},
		{"statistic: mean\n      n: 3\n      band: limit", "", "", "exactly one of value and ratio"},
		{"statistic: mean\n      n: 3\n      band: limit", "", "value: {cc: hpcc, metric: drain_rtts, bound: at_most, limt: 3}", "field limt not found"},
		// The statistic, its n and the band.
		{"band: limit", "", "value: {cc: hpcc, metric: drain_rtts, bound: at_most, limit: 1}", "statistic and n are required"},
		{"statistic: p99.9\n      n: 1000\n      band: limit", "", "value: {cc: hpcc, metric: drain_rtts, bound: at_most, limit: 1}", "one number per run: use mean or median"},
		{"statistic: p77\n      n: 3\n      band: limit", "", "value: {cc: hpcc, metric: drain_rtts, bound: at_most, limit: 1}", `statistic: "p77"`},
		{"statistic: median\n      n: 3\n      band: limit", "", "value: {cc: hpcc, metric: drain_rtts, bound: at_most, limit: 1}", "n 3: median needs at least 6 runs"},
		{"statistic: mean\n      n: 3", "", "value: {cc: hpcc, metric: drain_rtts, bound: at_most, limit: 1}", `band "": one of`},
		{"statistic: mean\n      n: 3\n      band: improvement", ", value: 0.5", "value: {cc: hpcc, metric: drain_rtts, bound: about}", "band improvement is for a ratio claim"},
		{"statistic: mean\n      n: 3\n      band: direction", ", value: 0.5", "ratio: {a: hpcc, b: cubic, metric: queue_peak, direction: below}", "band direction is for a ratio claim whose paper states no number"},
		{"statistic: mean\n      n: 3\n      band: factor2", "", "value: {cc: hpcc, metric: drain_rtts, bound: at_most, limit: 1}", "band factor2 needs the paper's number"},
		{"statistic: mean\n      n: 3\n      band: factor2", ", value: 0.67", "ratio: {a: hpcc, b: cubic, metric: queue_peak, direction: below}", "use band improvement"},
		{"statistic: median\n      n: 6\n      band: limit", "", "value: {cc: hpcc, metric: drain_rtts, bound: at_most, limit: 1}", "the file runs 3 seeds, so the claim could only ever be too few"},
	} {
		file, err := loadSuiteFile(t, fmt.Sprintf(base, tc.stat, tc.paper, tc.check))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s %s: %v, want %q", tc.stat, tc.paper, tc.check, err, tc.want)
			continue
		}
		// A claim's error is at its line (the 21st); a misspelt key at
		// the key's own line in the file (the 27th).
		at := file + ":21: claim \"c\""
		if strings.Contains(tc.want, "not found") {
			at = file + ":27: reproduce: field limt not found"
		}
		if !strings.Contains(err.Error(), at) {
			t.Errorf("%s: not at %s: %v", tc.want, at, err)
		}
	}
}

// Every mistaken claim of a file is reported in one pass, each at its line.
func TestSpecErrorsAllAtOnce(t *testing.T) {
	src := `name: x
topology: ../../topologies/repro-star-2-1ms.yaml
compare: [hpcc, cubic]
workload:
  - name: long
    long: {src: h1, dst: h0, start: 0, stop: 1s}
reproduce:
  title: t
  paper: p
  measure: queue
  seeds: [1, 2, 3]
  claims:
    - id: one
      claim: a claim
      statistic: p99
      n: 100
      band: limit
      paper: {where: "5.2", quote: q, statistic: p99}
      value: {cc: hpcc, metric: drain_rtts, bound: at_most, limit: 1}
    - id: two
      claim: a claim
      statistic: mean
      n: 2
      band: limit
      paper: {where: "5.2", quote: q}
      value: {cc: hpcc, metric: drain_rtts, bound: at_most, limit: 1}
`
	file, err := loadSuiteFile(t, src)
	for _, want := range []string{file + `:13: claim "one": statistic p99 is a percentile over flows`, file + `:20: claim "two": n 2: mean needs at least 3 runs`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want %q in %v", want, err)
		}
	}
}

// Every file of the suite prepares on this kernel (laws not loaded are
// skipped), and every seed gives its own workload.
func TestPrepareAll(t *testing.T) {
	all, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range all {
		p, err := runner.Prepare(filepath.Join(root, e.File))
		if err != nil {
			t.Errorf("%s: %v", e.Name, err)
			continue
		}
		if n := len(p.Variants[0].Flows); n == 0 || n > 5000 {
			t.Errorf("%s: %d flows", e.Name, n)
		}
		if e.Measure != "fct" || len(e.Seeds) < 2 {
			continue
		}
		a, err := p.Reseed(e.Seeds[0])
		if err != nil {
			t.Fatal(err)
		}
		b, err := p.Reseed(e.Seeds[1])
		if err != nil {
			t.Fatal(err)
		}
		if fa, fb := a.Variants[0].Flows, b.Variants[0].Flows; len(fa) == len(fb) && fa[0].Size == fb[0].Size && fa[0].Start == fb[0].Start {
			t.Errorf("%s: seeds %d and %d give the same first flow", e.Name, e.Seeds[0], e.Seeds[1])
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
	vs := []Value{Value(math.NaN()), 2, Value(math.Inf(1))}
	if b, err = json.Marshal(vs); err != nil || string(b) != `[null,2,"never"]` {
		t.Fatalf("values: %s %v", b, err)
	}
	var back []Value
	if err := json.Unmarshal(b, &back); err != nil || !math.IsNaN(float64(back[0])) || back[1] != 2 || !math.IsInf(float64(back[2]), 1) {
		t.Fatalf("%s -> %v %v", b, back, err)
	}
}

// The same seed gives the same workload: every flow's endpoints, size and
// start are identical when an experiment is prepared twice.
func TestSameSeedSameWorkload(t *testing.T) {
	all, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range all {
		path := filepath.Join(root, e.File)
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

// The paper figure is drawn for claims with a paper number and only then.
func TestPaperFigure(t *testing.T) {
	p := 2.0
	o := &Outcome{Name: "x", Claims: []ClaimOutcome{
		{ID: "a", Paper: PaperNumber{Value: &p}, Seeds: []SeedValue{{Seed: 1, Value: 3, Faithful: true}, {Seed: 2, Value: 9}}},
		{ID: "b", Paper: PaperNumber{}, Seeds: []SeedValue{{Seed: 1, Value: 3, Faithful: true}}},
	}}
	png, err := paperFigure(o)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("figure: %v, %d bytes", err, len(png))
	}
	o.Claims = o.Claims[1:]
	if png, err := paperFigure(o); err != nil || png != nil {
		t.Errorf("no numbered claim: %d bytes, %v", len(png), err)
	}
}

// A variant judged degraded is run again with the same seed, in a run of
// its own: its new outcome replaces the old one, which stays named beside
// it.
func TestRetryDegraded(t *testing.T) {
	testtier.Kernel(t)
	exps, err := Find(root, []string{"smoke"})
	if err != nil {
		t.Fatal(err)
	}
	e := exps[0]
	p, err := runner.Prepare(filepath.Join(root, e.File))
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Root: root, Out: t.TempDir(), Log: io.Discard}
	r := runSeed(context.Background(), e, p, 1, opt)
	v := r.variant("cubic")
	if v == nil || v.Status != "ran" {
		t.Fatalf("first run: %+v", r)
	}
	first := v.Dir
	v.Fidelity = "degraded: marked by the test"
	ps, err := p.Reseed(1)
	if err != nil {
		t.Fatal(err)
	}
	if !retryDegraded(context.Background(), e, ps, &r, opt) {
		t.Fatal("nothing retried")
	}
	v = r.variant("cubic")
	if v.Dir == first || v.Status != "ran" || len(v.Earlier) != 1 || v.Earlier[0] != first+": degraded: marked by the test" {
		t.Errorf("after the retry: %+v", v)
	}
	if _, err := os.Stat(filepath.Join(v.Dir, "run.json")); err != nil {
		t.Error(err)
	}
	// A faithful variant is not run again.
	v.Fidelity = "faithful"
	if retryDegraded(context.Background(), e, ps, &r, opt) {
		t.Error("a faithful variant was run again")
	}
}
