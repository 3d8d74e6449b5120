package calibrate

import (
	"maps"
	"slices"
	"testing"

	"cclab/kmod/law"
)

// The rule derives, for every law of the table, exactly the parameters
// it has a value for and the law has: today's laws get today's sets, a
// law added with int_max_age_ns gets the calibrated age with no list to
// extend, and a kernel congestion control gets nothing.
func TestDerivedParamsFollowTheLawTable(t *testing.T) {
	plan := loadPlan(t, "../../topologies/line-3.yaml")
	r := &Result{Classes: []Class{{Switches: 1, FloorNs: 80000}, {Switches: 3, FloorNs: 120000}}}
	d, err := Derive(r, plan, append(law.Laws(), "cubic"), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, p := range d.Params {
		got[p.Law] = append(got[p.Law], p.Name)
	}
	want := map[string][]string{
		"powertcp":       {"base_rtt_ns", "host_bw_mbps", "int_max_age_ns"},
		"theta_powertcp": {"base_rtt_ns", "host_bw_mbps"},
		"hpcc":           {"base_rtt_ns", "host_bw_mbps", "int_max_age_ns", "vai_ai_div"},
		"swift":          {"base_rtt_ns", "host_bw_mbps", "base_target_ns", "per_hop_ns", "hops", "fs_range_ns", "vai_ai_div", "ai_bytes"},
		"timely":         {"host_bw_mbps", "min_rtt_ns", "t_low_ns", "t_high_ns"},
		"dcqcn":          {"host_bw_mbps", "alpha_ns", "cnp_ns", "timer_ns"},
		"qcn":            {"host_bw_mbps"},
		"qcn_t":          {"host_bw_mbps"},
	}
	for _, l := range slices.Sorted(maps.Keys(want)) {
		g, w := slices.Sorted(slices.Values(got[l])), slices.Sorted(slices.Values(want[l]))
		if !slices.Equal(g, w) {
			t.Errorf("%s: derived %v, want %v", l, g, w)
		}
	}
	for l := range got {
		if _, ok := want[l]; !ok {
			t.Errorf("%s: derived %v, want none", l, got[l])
		}
	}
	// every law with an INT age gets the calibrated one
	for _, l := range law.All() {
		if slices.Contains(lawParamNames(l.String()), "int_max_age_ns") {
			if i := slices.IndexFunc(d.Params, func(p Param) bool { return p.Law == l.String() && p.Name == "int_max_age_ns" }); i < 0 || d.Params[i].Value != d.IntMaxAgeNs {
				t.Errorf("%s: int_max_age_ns not the calibrated %d ns", l, d.IntMaxAgeNs)
			}
		}
	}
}
