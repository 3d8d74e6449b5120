package runner

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"cclab/orchestrator/watch"
	"cclab/rundir"
)

// An experiment's events and schedule change the links at their times:
// run.json records every change with when it was due and when it was in
// force (each within 10 ms), and a long flow carries what the changed
// rate allows (100 Mbit/s for 1 s, then 50 for 2 s).
func TestLinkEventsRun(t *testing.T) {
	exp := writeExperiment(t, "repro-star-2-1ms.yaml", `switch: {}
watch: 100ms
events:
  - {at: 1s, link: "s0:h0", rate: 50Mbit}
schedule:
  period: 500ms
  start: 2s
  stop: 3s
  steps:
    - {at: 0s, link: host, buffer: 300KB}
    - {at: 250ms, link: host, buffer: 640KB}
workload:
  - name: l
    long: {src: h1, dst: h0, stop: 3s}
`)
	res, _ := runExperiment(t, exp)
	var rj struct {
		Extensions struct {
			LinkEvents LinkEventsJSON `json:"link_events"`
			Watch      WatchJSON      `json:"watch"`
		} `json:"extensions"`
		ZeroNs        int64 `json:"workload_zero_ns"`
		ClockOffsetNs int64 `json:"clock_offset_ns"`
	}
	readRunJSON(t, res.Dir, &rj)
	ev := rj.Extensions.LinkEvents
	if len(ev.Errors) > 0 || len(ev.Changes) != 5 {
		t.Fatalf("link_events: %d changes, errors %v; want 5", len(ev.Changes), ev.Errors)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 2250 * time.Millisecond, 2500 * time.Millisecond, 2750 * time.Millisecond}
	for i, c := range ev.Changes {
		if c.At != want[i] || c.LateNs < 0 || c.LateNs > int64(10*time.Millisecond) {
			t.Errorf("change %d (%s): at %v, in force %v after it was due; want at %v within 10 ms", i, c.Target, c.At, time.Duration(c.LateNs), want[i])
		}
	}
	// The recorded watch stream: a sample every 100 ms, the sender's
	// socket in each, and the switch stamping the new rate once the event
	// was in force.
	f, err := os.Open(filepath.Join(res.Dir, WatchFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var samples, sending, after50 int
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var s watch.Sample
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("watch.jsonl line %d: %v", samples+1, err)
		}
		samples++
		if slices.ContainsFunc(s.Flows, func(f watch.Flow) bool { return f.Host == "h1" && f.Sender && f.CwndBytes > 0 && f.SRTTUs >= 4000 }) {
			sending++
		}
		atRun := time.Duration(s.AtUnixNs - rj.ClockOffsetNs - rj.ZeroNs)
		for _, p := range s.Ports {
			if p.Node == "s0" && p.Iface == "h0" && atRun > 1100*time.Millisecond && p.RateBps == 50e6 {
				after50++
			}
		}
	}
	if samples < 25 || samples != rj.Extensions.Watch.Samples || sending < samples/2 || after50 < 15 {
		t.Errorf("watch.jsonl: %d samples (run.json says %d), %d with h1 sending, %d stamping 50 Mbit/s on s0/h0 after 1.1 s",
			samples, rj.Extensions.Watch.Samples, sending, after50)
	}

	rows, err := rundir.ReadFlows(res.Dir)
	if err != nil || len(rows) != 1 {
		t.Fatalf("flows.csv: %d rows, %v", len(rows), err)
	}
	// 1 s at 100 Mbit/s, then 50 until the queue drained after the
	// sender's stop at 3 s (goodput about 94 % of each): near 63
	// Mbit/s over its life; 94 had the rate not changed.
	mbps := float64(rows[0].Size) * 8 / (float64(rows[0].FCTNs) / 1e9) / 1e6
	if mbps < 55 || mbps > 70 {
		t.Errorf("the long flow carried %.1f Mbit/s over its %v; about 60 with its bottleneck halved at 1 s", mbps, time.Duration(rows[0].FCTNs))
	}
}

// Events are checked before anything is built: a link that does not exist
// and a schedule whose changes come faster than they take effect are
// refused at their line.
func TestLinkEventsRefused(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"events:\n  - {at: 1s, link: \"s0:h7\", rate: 50Mbit}\n", `has no node "h7"`},
		{"events:\n  - {at: 1s, link: spine, rate: 50Mbit}\n", "tiers: host, receiver"},
		{"events:\n  - {at: 1s, link: \"s0:h1\"}\n", "nothing to change"},
		{"schedule: {period: 8ms, start: 0s, stop: 1s, steps: [{at: 0s, link: host, state: down}, {at: 4ms, link: host, state: up}]}\n", "a change needs 10ms"},
		{"schedule: {period: 100ms, start: 0s, stop: 1s, steps: [{at: 150ms, link: host, state: down}]}\n", "not within the period"},
	} {
		_, err := Prepare(writeExperiment(t, "repro-star-2-1ms.yaml", c.body+"workload:\n  - name: l\n    long: {src: h1, dst: h0, stop: 1s}\n"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error saying %q", c.body, err, c.want)
		}
	}
}
