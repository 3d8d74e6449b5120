package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cclab/internal/runid"
	"cclab/kmod/lawload"
)

// Variants in the experiment file: a law under a name of its own with
// settings of its own counts as available (the run registers it), and its
// settings are checked by the law core before anything is built.
func TestPrepareVariants(t *testing.T) {
	body := "compare: [cubic, hpcc_vaisf]\nvariants:\n  hpcc_vaisf: {law: hpcc, set: {vai_enable: 1, vai_sf_acks: 30}}\nworkload:\n  - name: l\n    long: {src: h1, dst: h0, stop: 1s}\n"
	p, err := Prepare(writeExperiment(t, "star-16.yaml", body))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Laws) != 0 || strings.Join(p.derivedLaws(), ",") != "hpcc" || strings.Join(p.VariantNames, ",") != "hpcc_vaisf" || len(p.Variants) != 2 || p.Variants[1].CC != "hpcc_vaisf" {
		t.Fatalf("laws %v, variant names %v, variants %+v", p.Laws, p.VariantNames, p.Variants)
	}
	for _, c := range []struct{ from, to, want string }{
		{"vai_enable: 1", "vai_enable: 7", "vai_enable"},
		{"law: hpcc", "law: cubic", "not one of cclab's laws"},
		{"law: hpcc, ", "", "no law"},
		{"hpcc_vaisf: {", "hpcc: {", "named as its law"},
		{"hpcc_vaisf: {law: hpcc", "hpcc_vaisf: {law: hpcc}\n  swift: {law: hpcc", "variant swift: the name of one of cclab's laws"},
	} {
		bad := strings.Replace(body, c.from, c.to, 1)
		if c.from == "hpcc_vaisf: {" {
			bad = strings.Replace(bad, "compare: [cubic, hpcc_vaisf]", "compare: [cubic, hpcc]", 1)
		}
		if _, err := Prepare(writeExperiment(t, "star-16.yaml", bad)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q -> %q: %v, want an error saying %q", c.from, c.to, err, c.want)
		}
	}
}

// A workload entry's set: the flows of that entry run a variant of each
// run's law made for them, which counts as available; a run whose law is
// not one of cclab's, or a parameter its law does not have or takes out
// of range, is refused before anything is built, naming the entry.
func TestPrepareEntrySet(t *testing.T) {
	body := "compare: [qcn, qcn_t]\nlaws: {}\nswitch: {int: true, qcn: {qeq: 64KB}}\nworkload:\n  - name: slow\n    set: {init_rate_kbps: 100000}\n    long: {src: h1, dst: h0, stop: 1s}\n  - name: l\n    long: {src: h2, dst: h0, stop: 1s}\n"
	p, err := Prepare(writeExperiment(t, "star-16.yaml", body))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.VariantNames, ","); got != "qcn_slow,qcn_t_slow" {
		t.Errorf("variant names %s", got)
	}
	for _, v := range p.Variants {
		if v.Flows[0].CC != v.CC+"_slow" || v.Flows[1].CC != v.CC {
			t.Errorf("run of %s: flows run %s and %s", v.CC, v.Flows[0].CC, v.Flows[1].CC)
		}
	}
	for _, c := range []struct{ from, to, want string }{
		{"compare: [qcn, qcn_t]", "compare: [cubic]", `workload entry "slow" sets law parameters, but its flows run cubic in this run, not one of cclab's laws`},
		{"init_rate_kbps: 100000", "init_rate_kbps: 900000000", `workload entry "slow": set: `},
		{"init_rate_kbps: 100000", "init_rates: 1", `workload entry "slow": set: `},
	} {
		bad := strings.Replace(body, c.from, c.to, 1)
		if _, err := Prepare(writeExperiment(t, "star-16.yaml", bad)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q -> %q: %v, want an error saying %q", c.from, c.to, err, c.want)
		}
	}
	// QCN's flows of an entry named t would run as "qcn_t", QCN-T's name.
	bad := strings.Replace(strings.Replace(body, "compare: [qcn, qcn_t]", "compare: [qcn]", 1), "name: slow", "name: t", 1)
	want := `workload entry "t" sets law parameters, so its flows would run as "qcn_t", the name of one of cclab's laws`
	if _, err := Prepare(writeExperiment(t, "star-16.yaml", bad)); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("entry t: %v, want an error saying %q", err, want)
	}
}

// A run registers a variant under its name with its settings (and the
// calibration's), runs flows with it, and run.json records its parameters.
func TestVariantRun(t *testing.T) {
	id := runid.New()
	cleanAfter(t, id)
	name := "t" + string(id) + "v" // registrations are machine-wide
	opts := lawload.Options{PinDir: runid.New().BPFDir()}
	t.Cleanup(func() {
		if _, err := lawload.Unload(nil, opts); err != nil {
			t.Errorf("unload: %v", err)
		}
		os.Remove(opts.PinDir)
	})
	exp := writeExperiment(t, "star-16.yaml", "compare: ["+name+"]\nvariants:\n  "+name+`: {law: swift, set: {vai_enable: 1, ai_bytes: 2000}}
timeout: 20s
emulation: {calibrate: false}
workload:
  - name: incast
    incast: {dst: h0, fan_in: 2, size: 300KB}
`)
	out := runTwoFlowIncast(t, exp, id, opts)
	regs, err := lawload.List(opts)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range regs {
		if r.Name == name {
			found = r.Law == "swift" && strings.Contains(r.Params.String(), "vai_enable=1") && strings.Contains(r.Params.String(), "ai_bytes=2000")
		}
	}
	if !found {
		t.Fatalf("variant %s not registered as swift with its settings: %+v", name, regs)
	}
	var rj struct {
		CC map[string]struct {
			Params map[string]any `json:"params"`
		} `json:"cc"`
	}
	readRunJSON(t, filepath.Join(out, string(id), name), &rj)
	if v, ok := rj.CC[name].Params["ai_bytes"]; !ok || v.(float64) != 2000 {
		t.Errorf("run.json cc %s params: %v", name, rj.CC[name].Params)
	}
}
