package law

import (
	"errors"
	"strings"
	"testing"
)

// A setting is parsed once into law, parameter and value, and refused
// with a message naming what is wrong: an unknown law or parameter, a
// value that is no non-negative integer.
func TestParseSetting(t *testing.T) {
	s, err := ParseSetting("powertcp.gamma_ppm", "900000")
	if err != nil || s != (Setting{PowerTCP, "gamma_ppm", 900000}) || s.String() != "powertcp.gamma_ppm=900000" {
		t.Errorf("powertcp.gamma_ppm: %+v %v", s, err)
	}
	s, err = ParseSetting("host_bw_mbps", " 100")
	if err != nil || s != (Setting{0, "host_bw_mbps", 100}) || s.String() != "host_bw_mbps=100" {
		t.Errorf("host_bw_mbps: %+v %v", s, err)
	}
	if !s.AppliesTo(HPCC) || s.AppliesTo(DCTCP) {
		t.Errorf("host_bw_mbps applies to hpcc %v (want true), dctcp %v (want false)", s.AppliesTo(HPCC), s.AppliesTo(DCTCP))
	}
	for _, c := range []struct{ key, value, want string }{
		{"cubic.gamma_ppm", "1", `unknown law "cubic"`},
		{"powertcp.eta_ppm", "1", "powertcp has no parameter eta_ppm"},
		{"warp_factor", "9", "no law has it"},
		{"powertcp.", "1", "give param or law.param"},
		{"gamma_ppm", "0.9", "not a non-negative integer (in ppm)"},
		{"gamma_ppm", "-1", "not a non-negative integer"},
	} {
		if _, err := ParseSetting(c.key, c.value); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%s: %v, want an error saying %q", c.key, c.value, err, c.want)
		}
	}
}

// Settings are checked against the law table in user space: a value out
// of its row's range is blamed on its setting, a relation the law's own
// check refuses on the setting whose parameter the message names, and a
// later setting wins over an earlier one.
func TestSettingsParams(t *testing.T) {
	ss, err := ParseAssignments([]string{"host_bw_mbps=100", "hpcc.eta_ppm=900000", "hpcc.eta_ppm=950000"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := ss.Params(HPCC)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := p.Get("eta_ppm"); v != 950000 {
		t.Errorf("eta_ppm %d, want the later 950000", v)
	}
	if v, _ := p.Get("host_bw_mbps"); v != 100 {
		t.Errorf("host_bw_mbps %d, want 100", v)
	}
	if len(ss.For(DCTCP)) != 0 || len(ss.For(HPCC)) != 3 || len(ss.For(PowerTCP)) != 1 {
		t.Errorf("for dctcp %v, hpcc %v, powertcp %v", ss.For(DCTCP), ss.For(HPCC), ss.For(PowerTCP))
	}
	blamed := func(ss Settings, l Law, want int, msg string) {
		t.Helper()
		_, err := ss.Params(l)
		var se *SettingError
		if !errors.As(err, &se) || se.Index != want || !strings.Contains(err.Error(), msg) {
			t.Errorf("%v for %s: %v, want setting %d blamed, saying %q", ss, l, err, want, msg)
		}
	}
	blamed(Settings{{0, "host_bw_mbps", 100}, {HPCC, "max_stage", 101}}, HPCC, 1, "hpcc max_stage=101 stages: outside its range 0..100")
	blamed(Settings{{Timely, "t_high_ns", 600000}, {Timely, "t_low_ns", 700000}}, Timely, 1, "t_low_ns must be below t_high_ns")
	blamed(Settings{{HPCC, "max_stage", 1 << 33}}, HPCC, 0, "larger than 32 bits")
	// As a loader applies them: a setting for a law not loaded, or one no
	// loaded law has, is refused.
	if err := (Settings{{PowerTCP, "gamma_ppm", 1}}).Check([]Law{HPCC}); err == nil || !strings.Contains(err.Error(), "law powertcp is not among hpcc") {
		t.Errorf("powertcp setting for hpcc: %v", err)
	}
	if err := (Settings{{0, "gamma_ppm", 1}}).Check([]Law{HPCC, DCTCP}); err == nil || !strings.Contains(err.Error(), "none of hpcc, dctcp has it") {
		t.Errorf("gamma_ppm for hpcc, dctcp: %v", err)
	}
	if err := (Settings{{0, "gamma_ppm", 1}}).Check(All()); err != nil {
		t.Errorf("gamma_ppm=1 for every law: %v", err)
	}
	if _, err := ParseLaws([]string{"hpcc", "hpcc"}); err == nil {
		t.Error("a law named twice accepted")
	}
}
