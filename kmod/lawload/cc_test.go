package lawload

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"cclab/internal/runid"
	kbpf "cclab/kmod/bpf"
	lawpkg "cclab/kmod/law"
)

// testOpts returns options with a pin directory of the test's own, removed
// at the end (registrations are machine-wide: never touch anyone else's).
func testOpts(t *testing.T) Options {
	t.Helper()
	dir := runid.New().BPFDir()
	t.Cleanup(func() {
		regs, _ := List(Options{PinDir: dir})
		if len(regs) > 0 {
			unregister(regs, dir)
		}
		os.RemoveAll(dir)
	})
	return Options{PinDir: dir}
}

// shortName is a test-only congestion-control name for law (<= 15 chars).
func shortName(law string) string {
	id := string(runid.New())
	l, err := lawpkg.ParseLaw(law)
	if err != nil {
		return "t" + id + "_x" // a name no law has: the test's load fails on it
	}
	return fmt.Sprintf("t%s_%d", id, int(l)) // the law's id: any name fits
}

// loadForTest registers law under a test-only name (registrations are
// machine-wide: the real names stay free for whoever runs experiments)
// and unregisters it at the end.
func loadForTest(t *testing.T, law string, settings ...string) Registration {
	t.Helper()
	opts := testOpts(t)
	opts.Names = map[string]string{law: shortName(law)}
	regs, err := Load(context.Background(), []string{law}, settings, opts)
	if err != nil {
		t.Fatalf("load %s: %v", law, err)
	}
	r := regs[0]
	t.Cleanup(func() {
		if err := unregister([]Registration{r}, opts.PinDir); err != nil {
			t.Errorf("unregister %s: %v", r.Name, err)
		}
	})
	return r
}

// Every law passes this kernel's verifier, registers under its name with
// its defaults read back from the pinned object, and unregisters.
func TestEachLawRegistersAndUnregisters(t *testing.T) {
	for _, law := range Laws() {
		t.Run(law, func(t *testing.T) {
			opts := testOpts(t)
			opts.Names = map[string]string{law: shortName(law)}
			name := opts.Names[law]
			want, err := Resolve([]string{law}, nil)
			if err != nil {
				t.Fatal(err)
			}
			regs, err := Load(context.Background(), []string{law}, nil, opts)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if ok, _ := IsRegistered(name); !ok {
				t.Fatalf("%s not in %s after load", name, availablePath)
			}
			if len(regs[0].Programs) < 5 {
				t.Errorf("programs: %v", regs[0].Programs)
			}
			got, err := List(opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Name != name || got[0].Law != law {
				t.Fatalf("List = %+v", got)
			}
			if got[0].Params.String() != want[0].String() {
				t.Errorf("params read back %q, want %q", got[0].Params, want[0])
			}
			un, err := Unload([]string{law}, opts)
			if err != nil || len(un) != 1 {
				t.Fatalf("unload: %v %v", un, err)
			}
			if ok, _ := IsRegistered(name); ok {
				t.Fatalf("%s still registered after unload", name)
			}
			if ents, _ := os.ReadDir(opts.PinDir); len(ents) != 0 {
				t.Errorf("pins left after unload: %v", ents)
			}
		})
	}
}

// Parameters are set, read back, and bad ones register nothing.
func TestParameters(t *testing.T) {
	opts := testOpts(t)
	opts.Names = map[string]string{"hpcc": shortName("hpcc"), "swift": shortName("swift")}
	before, _ := Available()

	for _, bad := range [][]string{
		{"eta_ppm=5"},            // out of range (law core's check)
		{"no_such_param=1"},      // unknown
		{"hpcc.max_stage=x"},     // not a number
		{"max_stage=4294967296"}, // does not fit 32 bits
		{"swift.eta_ppm=950000"}, // swift has no eta
		{"eta_ppm"},              // not name=value
	} {
		_, err := Load(context.Background(), []string{"hpcc", "swift"}, bad, opts)
		if err == nil {
			t.Errorf("Load with %v: no error", bad)
			continue
		}
		t.Logf("%v: %v", bad, err)
		after, _ := Available()
		if !slices.Equal(before, after) {
			t.Fatalf("Load with %v registered something: %v -> %v", bad, before, after)
		}
		if regs, _ := List(opts); len(regs) != 0 {
			t.Fatalf("Load with %v left pins: %v", bad, regs)
		}
	}

	regs, err := Load(context.Background(), []string{"hpcc", "swift"},
		[]string{"base_rtt_ns=80000", "hpcc.eta_ppm=900000", "vai_enable=1"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unregister(regs, opts.PinDir) })
	got, err := List(opts)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]uint64{
		"hpcc":  {"base_rtt_ns": 80000, "eta_ppm": 900000, "vai_enable": 1, "max_stage": 5},
		"swift": {"base_rtt_ns": 80000, "vai_enable": 1, "beta_ppm": 800000},
	}
	for _, r := range got {
		for k, v := range want[r.Law] {
			p, ok := r.Params.Get(k)
			if !ok || p.Value != v {
				t.Errorf("%s %s = %v (%v), want %d", r.Law, k, p.Value, ok, v)
			}
		}
	}
	if len(got) != 2 {
		t.Errorf("List: %v", got)
	}
}

// Ensure keeps what is registered with the wanted parameters, loads what
// is missing, and refuses a registration with other parameters.
func TestEnsure(t *testing.T) {
	opts := testOpts(t)
	opts.Names = map[string]string{"dctcp": shortName("dctcp"), "hpcc": shortName("hpcc")}
	first, err := Load(context.Background(), []string{"dctcp"}, []string{"g_shift=5"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	regs, err := Ensure(context.Background(), []string{"dctcp", "hpcc"}, []string{"g_shift=5", "eta_ppm=900000"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(regs) != 2 || regs[0].Pin != first[0].Pin || regs[1].Law != "hpcc" {
		t.Fatalf("Ensure = %+v", regs)
	}
	if p, _ := regs[1].Params.Get("eta_ppm"); p.Value != 900000 {
		t.Errorf("hpcc eta_ppm = %d", p.Value)
	}
	if _, err := Ensure(context.Background(), []string{"dctcp"}, []string{"g_shift=6"}, opts); err == nil {
		t.Error("Ensure accepted dctcp registered with other parameters")
	} else {
		t.Log(err)
	}
	if got, _ := List(opts); len(got) != 2 {
		t.Errorf("List after Ensure: %v", got)
	}

	// Reconcile re-registers the one whose parameters differ, keeps the other.
	replaced, err := Reconcile(context.Background(), []string{"dctcp", "hpcc"}, []string{"g_shift=6", "eta_ppm=900000"}, opts)
	if err != nil || len(replaced) != 1 || replaced[0] != "dctcp" {
		t.Fatalf("Reconcile = %v, %v; want [dctcp]", replaced, err)
	}
	got, _ := List(opts)
	for _, r := range got {
		if r.Law == "dctcp" {
			if p, _ := r.Params.Get("g_shift"); p.Value != 6 {
				t.Errorf("dctcp g_shift after Reconcile = %d, want 6", p.Value)
			}
		}
	}
	if len(got) != 2 {
		t.Errorf("List after Reconcile: %v", got)
	}
}

// Loading a law cclab registered already is idempotent with the same
// parameters (the registration is returned, marked Existing, and still
// works), and refused with others, the error naming each that differs.
func TestLoadIsIdempotent(t *testing.T) {
	r := loadForTest(t, "swift", "ai_bytes=2000")
	opts := testOpts(t)
	opts.PinDir = filepathDir(r.Pin)
	opts.Names = map[string]string{"swift": r.Name}
	again, err := Load(context.Background(), []string{"swift"}, []string{"ai_bytes=2000"}, opts)
	if err != nil {
		t.Fatalf("second load with the same parameters: %v", err)
	}
	if len(again) != 1 || !again[0].Existing || again[0].Name != r.Name || again[0].Params.String() != r.Params.String() {
		t.Fatalf("second load returned %+v, want the existing registration", again)
	}
	if ok, err := IsRegistered(r.Name); err != nil || !ok {
		t.Fatalf("%s no longer registered after the second load: %v", r.Name, err)
	}
	_, err = Load(context.Background(), []string{"swift"}, []string{"ai_bytes=3000", "beta_ppm=700000"}, opts)
	if err == nil {
		t.Fatal("load with other parameters accepted")
	}
	for _, want := range []string{"ai_bytes 2000, asked 3000", "beta_ppm 800000, asked 700000"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "fs_range_ns") {
		t.Errorf("error names a parameter that does not differ: %v", err)
	}
}

// A registration records the build of cclab that made it: loading the same
// law and parameters from another build is refused (its code and trace
// records are not this build's), and Reconcile registers it again.
func TestLoadRefusesAnotherBuild(t *testing.T) {
	r := loadForTest(t, "dctcp")
	if want, _ := kbpf.Build("dctcp"); r.Build != want {
		t.Fatalf("registration build %q, want %q", r.Build, want)
	}
	opts := testOpts(t)
	opts.PinDir = filepathDir(r.Pin)
	opts.Names = map[string]string{"dctcp": r.Name}
	regs, err := List(opts)
	if err != nil || len(regs) != 1 || regs[0].Build != r.Build {
		t.Fatalf("list: %+v %v", regs, err)
	}
	// As if an older cclab had registered it.
	os.Remove(filepath.Join(r.Pin, buildPin))
	if err := pinBuild(filepath.Join(r.Pin, buildPin), strings.Repeat("0", 64)); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(context.Background(), []string{"dctcp"}, nil, opts); err == nil || !strings.Contains(err.Error(), "another cclab build") {
		t.Fatalf("load over another build: %v", err)
	}
	stale, err := Reconcile(context.Background(), []string{"dctcp"}, nil, opts)
	if err != nil || len(stale) != 1 {
		t.Fatalf("reconcile: stale %v, %v", stale, err)
	}
	regs, err = List(opts)
	if err != nil || len(regs) != 1 || regs[0].Build != r.Build {
		t.Fatalf("after reconcile: %+v %v", regs, err)
	}
	t.Cleanup(func() { unregister(regs, opts.PinDir) })
}
