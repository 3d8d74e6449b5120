package report

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	synth "cclab/internal/pcapsynth"
	"cclab/rundir"
)

// regroup puts each flow of a makeRun directory in the workload entry
// groups names (flows.csv's last column).
func regroup(t *testing.T, dir string, groups map[string]string) {
	t.Helper()
	p := filepath.Join(dir, "flows.csv")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i, l := range lines[1:] {
		id, _, _ := strings.Cut(l, ",")
		if g, ok := groups[id]; ok {
			lines[i+1] = strings.TrimSuffix(l, ",test") + "," + g
		}
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// withPFC adds a pause record to run.json's extensions, as the PFC
// controller writes it.
func withPFC(t *testing.T, dir string, pfc rundir.PFC) {
	t.Helper()
	setRunJSON(t, dir, "extensions", map[string]any{"pfc": pfc})
}

// The lossless measure on a run whose flows are known exactly: a burst
// (b1) from h1, victims from h0 (v1 4 KB in the entry victims_short, v2
// 1.2 MB in victims, paced at 1460 B per 24 us), and after the burst v2
// beside w (the entry victimsx, not a victim), paced at half v2's rate
// (1460 B per 48 us); run.json carries a pause record.
func TestLosslessMeasure(t *testing.T) {
	dir, _ := makeRun(t, []runFlow{
		{id: "b1", src: h1, dst: h2, srcName: "h1", sport: 40000, size: 100_000, gap: 24 * time.Microsecond},
		{id: "v1", src: h0, dst: h2, srcName: "h0", sport: 40001, size: 4_000, gap: 10 * time.Microsecond, start: 200 * time.Microsecond},
		{id: "v2", src: h0, dst: h2, srcName: "h0", sport: 40002, size: 1_200_000, gap: 24 * time.Microsecond},
		{id: "w", src: h1, dst: h2, srcName: "h1", sport: 40003, size: 600_000, gap: 48 * time.Microsecond},
	})
	regroup(t, dir, map[string]string{"b1": "bursts", "v1": "victims_short", "v2": "victims", "w": "victimsx"})
	withPFC(t, dir, rundir.PFC{Mode: "static", XoffBytes: 150_000, Pauses: 12, PausedNs: 34_500_000, MaxSpreadHops: 2, LostEvents: 1,
		Ports: []rundir.PFCPort{{Node: "h0", Host: true, Pauses: 3}, {Node: "h1", Host: true}, {Node: "s0", Pauses: 9}, {Node: "s0", Iface: "p-h1"}}})
	// The pause timeline: s0/p-h0 paused twice (1-3 ms, 5-6 ms), h0's
	// NIC once (2-2.5 ms), on the monotonic clock.
	mono := func(d time.Duration) int64 { return synth.Epoch0.Add(d).UnixNano() - offset }
	timeline := []rundir.PFCChange{
		{TimeNs: mono(1 * time.Millisecond), Node: "s0", Iface: "p-h0", Event: rundir.PFCPause, PeerNode: "s1", PeerIface: "s0", CrossingNs: 1, DueNs: 2, Hop: 1},
		{TimeNs: mono(2 * time.Millisecond), Node: "h0", Iface: "eth0", Event: rundir.PFCPause, PeerNode: "s0", PeerIface: "h0", CrossingNs: 1, DueNs: 2, Hop: 2},
		{TimeNs: mono(2500 * time.Microsecond), Node: "h0", Iface: "eth0", Event: rundir.PFCResume, PeerNode: "s0", PeerIface: "h0", CrossingNs: 1, DueNs: 2},
		{TimeNs: mono(3 * time.Millisecond), Node: "s0", Iface: "p-h0", Event: rundir.PFCResume, PeerNode: "s1", PeerIface: "s0", CrossingNs: 1, DueNs: 2},
		{TimeNs: mono(5 * time.Millisecond), Node: "s0", Iface: "p-h0", Event: rundir.PFCPause, PeerNode: "s1", PeerIface: "s0", CrossingNs: 1, DueNs: 2, Hop: 1},
		{TimeNs: mono(6 * time.Millisecond), Node: "s0", Iface: "p-h0", Event: rundir.PFCResumeAtStop, PeerNode: "s1", PeerIface: "s0"},
	}
	if err := rundir.WritePFCChanges(filepath.Join(dir, rundir.PFCCSV), timeline); err != nil {
		t.Fatal(err)
	}
	a, err := AnalyzeRun(context.Background(), dir, Config{Window: 100 * time.Microsecond, Measure: "lossless", Group: "victims"})
	if err != nil {
		t.Fatal(err)
	}
	at := func(d time.Duration) time.Duration { return time.Duration(synth.Epoch0.Add(d).UnixNano() - a.Origin) }
	wantPauses := []PortPauses{
		{Port: "s0/p-h0", By: "s1/s0", Pauses: []PauseSpell{{at(time.Millisecond), at(3 * time.Millisecond)}, {at(5 * time.Millisecond), at(6 * time.Millisecond)}}},
		{Port: "h0/eth0", By: "s0/h0", Pauses: []PauseSpell{{at(2 * time.Millisecond), at(2500 * time.Microsecond)}}},
	}
	if !reflect.DeepEqual(a.Pauses, wantPauses) {
		t.Errorf("pause timeline %+v\nwant %+v", a.Pauses, wantPauses)
	}
	summary := strings.Join(a.SummaryLines(), "\n")
	if want := "PFC: 12 pauses on 2 ports (1 host NICs), paused 34.5ms in all, the longest 0s, spread 2 hops"; !strings.Contains(summary, want) {
		t.Errorf("the summary lacks %q:\n%s", want, summary)
	}
	figs, err := a.Figures()
	if err != nil {
		t.Fatal(err)
	}
	drawn := false
	for _, f := range figs {
		drawn = drawn || (f.Name == "pfc_pauses" && len(f.PNG) > 0)
	}
	if !drawn {
		t.Error("no pfc_pauses figure")
	}
	m, s := a.Measures[0].Metrics, a.Measures[0].Samples
	for k, want := range map[string]float64{"pfc_pauses": 12, "pfc_paused": 34_500_000, "pfc_spread_hops": 2, "pfc_hosts_paused": 1, "pfc_switch_ports_paused": 1, "pfc_lost_events": 1,
		"victim_short_n": 1, "victim_long_n": 1} {
		if m[k] != want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
	// As the page prints it: 34.5 ms.
	lossless, _ := LookupMeasure("lossless")
	for _, mt := range lossless.Metrics {
		if mt.Key == "pfc_paused" {
			if got := mt.Format(m["pfc_paused"]); got != "34.50" {
				t.Errorf("paused time printed %q, want 34.50 (ms)", got)
			}
		}
	}
	fct := map[string]float64{}
	for _, f := range a.Flows {
		fct[f.ID] = float64(f.PcapFCT)
	}
	if m["victim_short_fct"] != fct["v1"] || m["victim_long_fct"] != fct["v2"] {
		t.Errorf("victim FCTs %v / %v, want v1's %v and v2's %v", m["victim_short_fct"], m["victim_long_fct"], fct["v1"], fct["v2"])
	}
	// While b1 sends (1.6 ms), v2 sends 1514 B per 24 us, 505 Mbit/s on
	// the 1 Gbit/s link, v1 its 4 KB (1 % of the span): about 0.51.
	if r := m["victim_rate_during"]; r < 0.46 || r > 0.56 {
		t.Errorf("victim_rate_during %.3f, want about 0.51", r)
	}
	// After the burst, v2 and w share 2:1: Jain (2+1)^2 / (2 (4+1)) = 0.9.
	if j := m["after_jain"]; math.Abs(j-0.9) > 0.02 {
		t.Errorf("after_jain %.3f, want 0.9 (v2 at twice w's rate)", j)
	}
	t.Logf("victim_rate_during %.3f, after_jain %.4f, base RTT %v", m["victim_rate_during"], m["after_jain"], time.Duration(m["base_rtt"]))
	under := s["under50k_slowdown"]
	if len(under) != 1 || under[0].Flow != "v1" {
		t.Errorf("under50k_slowdown %+v, want v1 only", under)
	}
	if len(s["long_slowdown"]) != 1 || len(s["all_slowdown"]) != 4 {
		t.Errorf("the FCT classes: long %d all %d, want 1 and 4", len(s["long_slowdown"]), len(s["all_slowdown"]))
	}
}

// A lossy run has no pause record: its pause counts are unknown, not
// zero; a victim that never completed makes its class's mean censored.
func TestLosslessMeasureLossyAndCensored(t *testing.T) {
	dir, _ := makeRun(t, []runFlow{
		{id: "v1", src: h0, dst: h2, srcName: "h0", sport: 40001, size: 4_000, gap: 10 * time.Microsecond},
		{id: "v2", src: h1, dst: h2, srcName: "h1", sport: 40002, size: 8_000, gap: 10 * time.Microsecond, start: time.Millisecond, failed: true},
	})
	regroup(t, dir, map[string]string{"v1": "victims", "v2": "victims"})
	a, err := AnalyzeRun(context.Background(), dir, Config{Window: 100 * time.Microsecond, Measure: "lossless", Group: "victims"})
	if err != nil {
		t.Fatal(err)
	}
	m := a.Measures[0].Metrics
	for _, k := range []string{"pfc_pauses", "pfc_spread_hops", "pfc_hosts_paused", "pfc_switch_ports_paused", "victim_rate_during", "after_jain", "victim_long_fct"} {
		if !math.IsNaN(m[k]) {
			t.Errorf("%s = %v in a lossy run without bursts or long victims, want NaN", k, m[k])
		}
	}
	if !math.IsInf(m["victim_short_fct"], 1) || m["victim_short_n"] != 2 {
		t.Errorf("victim_short_fct %v over %v flows, want +Inf over 2 (one never completed)", m["victim_short_fct"], m["victim_short_n"])
	}
}
