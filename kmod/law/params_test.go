package law

import (
	"strings"
	"testing"
)

// Every default parameter set passes its check, and every parameter has
// an out-of-range value that the check refuses with a message naming it.
func TestParamsCheck(t *testing.T) {
	bad := map[string]map[string]uint64{ // by law name: a law without a row fails below
		"powertcp": {"base_rtt_ns": 999, "host_bw_mbps": 0, "gamma_ppm": 1000001,
			"beta_bytes": 1 << 31, "expected_flows": 0, "init_cwnd_bytes": 1 << 31,
			"max_cwnd_bytes": 1000, "int_max_age_ns": 0},
		"theta_powertcp": {"base_rtt_ns": 2e9, "host_bw_mbps": 800001, "gamma_ppm": 0,
			"beta_bytes": 1 << 31, "expected_flows": 100001, "init_cwnd_bytes": 1 << 31,
			"max_cwnd_bytes": 1<<30 + 1},
		"hpcc": {"base_rtt_ns": 0, "host_bw_mbps": 0, "eta_ppm": 99999, "max_stage": 101,
			"wai_bytes": 1 << 31, "expected_flows": 0, "init_cwnd_bytes": 1 << 31,
			"max_cwnd_bytes": 1000, "int_max_age_ns": 2e9, "vai_enable": 2, "vai_sf_acks": 100001,
			"vai_token_thresh": 1<<40 + 1, "vai_ai_div": 0, "vai_bank_cap": 0, "vai_ai_cap": 1001,
			"vai_dampener_const": 0},
		"swift": {"base_rtt_ns": 0, "host_bw_mbps": 0, "base_target_ns": 999, "per_hop_ns": 1e9,
			"hops": 16, "fs_range_ns": 2e9, "fs_min_cwnd_mppm": 999, "fs_max_cwnd_segs": 0,
			"ai_bytes": 0, "beta_ppm": 0, "max_mdf_ppm": 1000000, "min_cwnd_bytes": 0,
			"init_cwnd_bytes": 1 << 31, "max_cwnd_bytes": 100, "pace_always": 2, "vai_enable": 7, "vai_sf_acks": 1 << 20,
			"vai_token_thresh": 1 << 41, "vai_ai_div": 0, "vai_bank_cap": 2e6, "vai_ai_cap": 0,
			"vai_dampener_const": 1001},
		"dctcp": {"g_shift": 17, "alpha_init_ppm": 1000001, "init_cwnd_segs": 0, "max_cwnd_bytes": 1},
		"timely": {"min_rtt_ns": 999, "t_low_ns": 0, "t_high_ns": 2e9, "alpha_ppm": 0, "beta_ppm": 1600001,
			"hai_n": 0, "delta_kbps": 800000001, "host_bw_mbps": 0, "min_rate_kbps": 800000001,
			"max_cwnd_bytes": 65534, "init_rate_kbps": 800000001, "seg_bytes": 1<<30 + 1, "tcd": 2},
		"dcqcn": {"tcd": 2, "alpha_ns": 999, "cnp_ns": 1e9 + 1, "timer_ns": 0, "byte_counter_bytes": 1<<30 + 1,
			"g_shift": 17, "fast_recovery": 101, "rai_kbps": 800000001, "rhai_kbps": 800000001,
			"host_bw_mbps": 800001, "min_rate_kbps": 800000001, "max_cwnd_bytes": 1<<30 + 1,
			"init_rate_kbps": 800000001},
		"qcn": {"byte_counter_bytes": 1<<30 + 1, "timer_ns": 999, "fast_recovery": 101, "gd_shift": 5,
			"rai_kbps": 800000001, "rhai_kbps": 800000001, "host_bw_mbps": 0, "min_rate_kbps": 800000001,
			"max_cwnd_bytes": 65534, "init_rate_kbps": 800000001},
		"qcn_t": {"timer_ns": 1e9 + 1, "fast_recovery": 101, "hai_cycles": 1000001, "gd_shift": 17,
			"rai_kbps": 800000001, "rhai_kbps": 800000001, "host_bw_mbps": 800001, "min_rate_kbps": 800000001,
			"max_cwnd_bytes": 1<<30 + 1, "init_rate_kbps": 800000001},
	}
	// The relations: TIMELY's T_low below T_high.
	p, _ := DefaultParams(Timely)
	if err := p.SetAssignment("t_low_ns=500000"); err != nil {
		t.Fatal(err)
	}
	if err := p.Check(); err == nil || !strings.Contains(err.Error(), "t_low_ns must be below t_high_ns") {
		t.Errorf("timely t_low_ns = t_high_ns: %v", err)
	}
	for _, name := range Laws() {
		l, err := ParseLaw(name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := DefaultParams(l)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Check(); err != nil {
			t.Errorf("%s defaults refused: %v", l, err)
		}
		list := p.List()
		if len(list) != len(bad[name]) {
			t.Errorf("%s has %d parameters, the test covers %d (bad in params_test.go: one out-of-range value per parameter)", l, len(list), len(bad[name]))
		}
		for _, q := range list {
			v, ok := bad[name][q.Name]
			if !ok {
				t.Errorf("%s %s: no out-of-range value in the test", l, q.Name)
				continue
			}
			p2, _ := DefaultParams(l)
			if err := p2.Set(q.Name, v); err != nil {
				t.Fatalf("%s %s=%d: %v", l, q.Name, v, err)
			}
			err := p2.Check()
			if err == nil {
				t.Errorf("%s %s=%d accepted", l, q.Name, v)
				continue
			}
			// The message names the parameter (the VAI ones share one message).
			field := strings.TrimPrefix(q.Name, "vai_")
			msg := err.Error()
			if !strings.Contains(msg, field) && !strings.Contains(msg, "variable AI") &&
				!strings.Contains(msg, "init_cwnd") && !strings.Contains(msg, "min/max_cwnd") &&
				!strings.Contains(msg, "additive increase") && !strings.Contains(msg, "flow-based") &&
				!strings.Contains(msg, "base_target_ns/per_hop_ns/hops") {
				t.Errorf("%s %s=%d: message %q does not say which parameter", l, q.Name, v, msg)
			}
		}
	}
}

func TestParamsAssignment(t *testing.T) {
	p, err := DefaultParams(HPCC)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetAssignment("eta_ppm=900000"); err != nil {
		t.Fatal(err)
	}
	if v, _ := p.Get("eta_ppm"); v != 900000 {
		t.Errorf("eta_ppm %d after assignment, want 900000", v)
	}
	for _, kv := range []string{"eta_ppm", "=5", "eta_ppm=0.95", "eta_ppm=-1", "nosuch=1", "max_stage=4294967296"} {
		if err := p.SetAssignment(kv); err == nil {
			t.Errorf("assignment %q accepted", kv)
		}
	}
	if _, err := ParseLaw("cubic"); err == nil {
		t.Error("unknown law accepted")
	}
}

func TestReadTraceErrors(t *testing.T) {
	cases := map[string]string{
		"empty":          "",
		"no time column": "acked\n1448\n",
		"unknown column": "time_ns,bogus\n1,2\n",
		"twice":          "time_ns,acked,acked\n1,2,3\n",
		"not a number":   "time_ns,acked\n1,lots\n",
		"negative":       "time_ns,rtt_us\n1,-5\n",
		"backwards":      "time_ns\n10\n5\n",
		"too many hops":  "time_ns,nhops\n1,6\n",
		"missing hop":    "time_ns,nhops,h1_qlen,h1_tx,h1_ts\n1,1,0,0,0\n",
		"hop 2 missing":  "time_ns,nhops,h1_qlen,h1_tx,h1_ts,h1_rate\n1,2,0,0,0,1000\n",
		"empty time":     "time_ns,acked\n,1\n",
		"age > time":     "time_ns,echo_age_ns,nhops,h1_qlen,h1_tx,h1_ts,h1_rate\n5,10,1,0,0,0,1000\n",
		"rate too big":   "time_ns,nhops,h1_qlen,h1_tx,h1_ts,h1_rate\n1,1,0,0,0,4294967296\n",
		"qcn_fb > 63":    "time_ns,qcn_fb\n1,64\n",
		"qcn_fb age":     "time_ns,echo_age_ns,qcn_fb\n5,10,1\n",
	}
	for name, csv := range cases {
		if _, err := ReadTrace(strings.NewReader(csv)); err == nil {
			t.Errorf("%s: trace accepted", name)
		} else if name == "backwards" && !strings.Contains(err.Error(), "line 3") {
			t.Errorf("%s: %v does not name line 3", name, err)
		}
	}
	ev, err := ReadTrace(strings.NewReader("# comment\ntime_ns, acked ,nhops,h1_qlen,h1_tx,h1_ts,h1_rate\n1,1448,0,,,,\n2,1448,1,5,6,7,1000\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ev) != 2 || len(ev[0].Hops) != 0 || ev[1].Hops[0] != (TraceHop{5, 6, 7, 1000}) || ev[1].Line != 4 {
		t.Errorf("parsed %+v", ev)
	}
}

// The ranges of law_table.h are what <law>_params_check enforces: for
// every parameter, one below its minimum and one above its maximum are
// refused with a message naming it, and (unless another parameter narrows
// the range) the minimum and the maximum themselves are accepted.
func TestParamRangesAreChecked(t *testing.T) {
	for _, l := range All() {
		p, err := DefaultParams(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range p.Info() {
			// try checks the defaults with q set to v; !ok: v does not
			// fit the field, nothing to check.
			try := func(v uint64) (ok bool, err error) {
				p2, _ := DefaultParams(l)
				if p2.Set(q.Name, v) != nil {
					return false, nil
				}
				return true, p2.Check()
			}
			if q.Min > 0 {
				if ok, err := try(q.Min - 1); ok && (err == nil || !strings.Contains(err.Error(), q.Name)) {
					t.Errorf("%s %s=%d (below %d): %v, want refused naming it", l, q.Name, q.Min-1, q.Min, err)
				}
			}
			if ok, err := try(q.Max + 1); ok && q.Max < ^uint64(0) && (err == nil || !strings.Contains(err.Error(), q.Name)) {
				t.Errorf("%s %s=%d (above %d): %v, want refused naming it", l, q.Name, q.Max+1, q.Max, err)
			}
			if q.Related {
				continue
			}
			for _, v := range []uint64{q.Min, q.Max} {
				if _, err := try(v); err != nil {
					t.Errorf("%s %s=%d (in range [%d, %d]) refused: %v", l, q.Name, v, q.Min, q.Max, err)
				}
			}
		}
	}
}
