package vm

import (
	"slices"
	"strings"
	"testing"

	"cclab/kmod/law"
)

// The console parser: report lines may follow kernel output on the same
// line, and a missing or failed check must fail the run.
func TestResultParsing(t *testing.T) {
	var r Result
	for _, l := range []string{
		"[    1.0] random kernel line",
		"CCLAB-VM BOOT kernel=6.1.0-50-amd64 cpus=2\r",
		"CCLAB-VM CHECK a PASS fine",
		"[    2.0] noise CCLAB-VM CHECK b FAIL broken thing",
		"CCLAB-VM METRIC cost 12.5 ns",
		"CCLAB-VM CHECK c MAYBE",
		"CCLAB-VM DONE",
	} {
		r.parseLine(l)
	}
	if !r.Booted || r.Kernel != "6.1.0-50-amd64" || !r.Done {
		t.Fatalf("boot/done not parsed: %+v", r)
	}
	if len(r.Checks) != 2 || !r.Checks[0].Pass || r.Checks[1].Pass || r.Checks[1].Detail != "broken thing" {
		t.Fatalf("checks: %+v", r.Checks)
	}
	if m, ok := r.Metric("cost"); !ok || m.Value != 12.5 || m.Unit != "ns" {
		t.Fatalf("metric: %+v", r.Metrics)
	}
	err := r.Err([]string{"a", "b", "z"})
	if err == nil || !strings.Contains(err.Error(), "b (broken thing)") || !strings.Contains(err.Error(), "z (not reported)") {
		t.Fatalf("Err = %v", err)
	}
	r2 := Result{Booted: true, Done: true, Checks: []Check{{Name: "a", Pass: true}}}
	if err := r2.Err([]string{"a"}); err != nil {
		t.Fatal(err)
	}
	if err := (&Result{}).Err(nil); err == nil {
		t.Fatal("a guest that never booted passed")
	}
}

// Every law with a module build is loaded, carries a flow and unloads in
// the guest: its checks are required without a list naming it.
func TestEveryModuleLawIsRequired(t *testing.T) {
	req := Required(&Result{})
	for _, l := range law.All() {
		n := l.String()
		want := l.HasModule()
		for _, c := range []string{"rmmod_busy_" + n, "rmmod_idle_" + n, "no_leak_" + n} {
			if slices.Contains(req, c) != want {
				t.Errorf("law %s (module build %v): check %s required %v", n, want, c, !want)
			}
		}
		if want && !slices.Contains(req, "load_"+n) {
			t.Errorf("law %s: load_%s not required", n, n)
		}
	}
}
