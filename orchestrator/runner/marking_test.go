package runner

import (
	"path/filepath"
	"strings"
	"testing"
)

// ECN profiles per compared name: each variant's switch marks as its
// profile says (RED for reno, none for cubic) or, without one, as the
// switch section does (a step for bbr). run.json records the profile, and
// what the kernel holds on the ports; the ports' CE counts follow it.
func TestECNProfilesRun(t *testing.T) {
	exp := writeExperiment(t, "star-16.yaml", `compare: [reno, cubic, bbr]
timeout: 20s
emulation: {calibrate: false}
hosts: {ecn: true, gso: false, tso: false}
switch:
  ecn_threshold: 20KB
  ecn_profiles:
    reno: {ecn_red: {kmin: 10KB, kmax: 40KB, pmax: 0.5}}
    cubic: {ecn_threshold: 0B}
workload:
  - name: incast
    incast: {dst: h0, fan_in: 4, size: 500KB, start: 10ms}
`)
	res, dir, _ := runSwitchExperiment(t, exp)
	for _, c := range []struct {
		cc, from  string
		threshold uint64
		red       bool
		port      PortMarkingJSON // the 100 Mbit/s ports
		marks     bool
	}{
		{"reno", "ecn_profiles.reno", 0, true, PortMarkingJSON{RateBps: 100e6, KminBytes: 10_000, KmaxBytes: 40_000, Pmax: 0.5}, true},
		{"cubic", "ecn_profiles.cubic", 0, false, PortMarkingJSON{RateBps: 100e6}, false},
		{"bbr", "switch", 20_000, false, PortMarkingJSON{RateBps: 100e6, ThresholdBytes: 20_000}, true},
	} {
		var rj struct {
			Extensions struct {
				Switch TelemetryJSON `json:"switch"`
			} `json:"extensions"`
			Errors []string `json:"errors"`
		}
		readRunJSON(t, filepath.Join(dir, c.cc), &rj)
		sw := rj.Extensions.Switch
		var ce uint64
		for _, ps := range sw.Ports {
			ce += ps.CEMarked
		}
		t.Logf("%s: profile %s, threshold %d, red %+v, ports %+v: %d CE marks", c.cc, sw.ECNProfile, sw.ECNThreshold, sw.ECNRed, sw.ECNPorts, ce)
		if len(rj.Errors) > 0 {
			t.Errorf("%s: run errors %v", c.cc, rj.Errors)
		}
		if sw.ECNProfile != c.from || sw.ECNThreshold != c.threshold || (sw.ECNRed != nil) != c.red {
			t.Errorf("%s: run.json records profile %q threshold %d red %+v", c.cc, sw.ECNProfile, sw.ECNThreshold, sw.ECNRed)
		}
		if len(sw.ECNPorts) != 1 || sw.ECNPorts[0] != c.port {
			t.Errorf("%s: the ports hold %+v, want %+v", c.cc, sw.ECNPorts, c.port)
		}
		if (ce > 0) != c.marks {
			t.Errorf("%s: %d packets CE-marked, want marks: %v", c.cc, ce, c.marks)
		}
	}
	for _, s := range res.Runs {
		if s.OK != 4 {
			t.Errorf("%s: flows %+v", s.CC, s)
		}
	}
}

// A profile whose RED thresholds, scaled to a port's rate, meet is refused
// when the experiment is prepared, before anything is built, with the line
// of the profile.
func TestPrepareRefusesCollapsedRED(t *testing.T) {
	exp := writeExperiment(t, "star-16.yaml", `compare: [reno, cubic]
switch:
  ecn_profiles:
    reno: {ecn_red: {kmin: 100B, kmax: 110B, rate: 25Gbit}}
workload:
  - name: l
    long: {src: h1, dst: h0, stop: 1s}
`)
	_, err := Prepare(exp)
	if err == nil || !strings.Contains(err.Error(), "exp.yaml:6: ecn_profiles.reno (for reno): switch port s0/") ||
		!strings.Contains(err.Error(), "kmin 0B is not below kmax 0B") {
		t.Fatalf("Prepare: %v, want the profile's line and the collapsed thresholds", err)
	}
}
