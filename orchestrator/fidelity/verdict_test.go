package fidelity

import (
	"strings"
	"testing"
	"time"

	"cclab/orchestrator/cpuqueue"
	"cclab/orchestrator/health"
)

// inputs is a quiet 100 Mbit/s run on a 5-switch path of 4.9 ms: every
// invariant held.
func inputs() Inputs {
	return Inputs{
		Health: health.Report{
			Interval: int64(100 * time.Millisecond),
			Links:    []health.LinkRate{{Node: "e0", Iface: "h0", ConfigBps: 100e6, Ratio: 1.0}},
			CPU:      health.CPU{Windows: 100, SaturatedShare: 0.01},
		},
		CPUQueue: &cpuqueue.Report{Links: 6, QueueP50Ns: int64(20 * time.Microsecond), QueueP99Ns: int64(300 * time.Microsecond)},
		Path:     Path{Switches: 5, RTTNs: int64(4900 * time.Microsecond)},
	}
}

// quietLossless is a lossless run on 1 ms links whose every invariant held.
func quietLossless() *Lossless {
	return &Lossless{Headroom: 28028, Auto: true, LinkDelay: time.Millisecond,
		Lateness: LatenessStats{N: 40, P50: 30 * time.Microsecond, P99: 200 * time.Microsecond, Max: 400 * time.Microsecond}}
}

func failed(v Verdict) []string {
	var out []string
	for _, c := range v.Checks {
		if !c.OK {
			out = append(out, c.Name)
		}
	}
	return out
}

// Each bound at its edge: just inside is faithful, just outside degraded
// with that check named.
func TestVerdictBounds(t *testing.T) {
	lim := DefaultLimits()
	if v := Judge(inputs(), lim); !v.Faithful() {
		t.Fatalf("quiet run: %s", v)
	}
	cases := []struct {
		name   string
		change func(*Inputs)
		fails  string // "" for faithful
	}{
		// 100 Mbit/s in 100 ms windows: HTB's 64 KB burst and a 64 KB
		// packet allow 10.5 % over, plus 3 %.
		{"link within HTB's burst", func(in *Inputs) { in.Health.Links[0].Ratio = 1.13 }, ""},
		{"link above it", func(in *Inputs) { in.Health.Links[0].Ratio = 1.14 }, "link rate"},
		{"1 Gbit/s link at 1.05", func(in *Inputs) {
			in.Health.Links[0].ConfigBps, in.Health.Links[0].Ratio = 1e9, 1.05
		}, "link rate"},
		// 5 % of 4.9 ms + 10 us = 255 us; 15 % + 100 us = 835 us.
		{"CPU queue p50 at its bound", func(in *Inputs) { in.CPUQueue.QueueP50Ns = int64(255 * time.Microsecond) }, ""},
		{"CPU queue p50 above", func(in *Inputs) { in.CPUQueue.QueueP50Ns = int64(256 * time.Microsecond) }, "CPU queue p50"},
		{"CPU queue p99 above", func(in *Inputs) { in.CPUQueue.QueueP99Ns = int64(836 * time.Microsecond) }, "CPU queue p99"},
		// With the probe, saturation decides above a quarter of the
		// windows; without it, above 5 %.
		{"saturated 20 % with the probe", func(in *Inputs) { in.Health.CPU.SaturatedShare = 0.2 }, ""},
		{"saturated 30 % with the probe", func(in *Inputs) { in.Health.CPU.SaturatedShare = 0.3 }, "CPU saturation"},
		{"saturated 6 % without the probe", func(in *Inputs) { in.Health.CPU.SaturatedShare, in.CPUQueue = 0.06, nil }, "CPU saturation"},
		{"a backlog drop", func(in *Inputs) { in.Health.Softnet.Dropped = 1 }, "CPU backlog"},
		// The runner's threads on the line's CPU: judged only then, above
		// a quarter of the windows.
		{"runner CPU saturated 30 %, not confined", func(in *Inputs) { in.Health.CPU.UserSaturatedShare = 0.3 }, ""},
		{"runner CPU saturated 20 %", func(in *Inputs) {
			in.Health.CPU.UserCPUs, in.Health.CPU.UserSaturatedShare = []int{1}, 0.2
		}, ""},
		{"runner CPU saturated 30 %", func(in *Inputs) {
			in.Health.CPU.UserCPUs, in.Health.CPU.UserSaturatedShare = []int{1}, 0.3
		}, "CPU saturation of the runner"},
		{"1 % stolen", func(in *Inputs) { in.Health.CPU.Stolen = 0.01 }, ""},
		{"3 % stolen", func(in *Inputs) { in.Health.CPU.Stolen = 0.03 }, "CPU stolen"},
		// A lossless run on 1 ms links: nothing dropped, nothing lost,
		// within the model's headroom, pauses within the line's bars
		// (5 % of 1 ms + 10 us = 60 us; 15 % + 100 us = 250 us).
		{"quiet lossless run", func(in *Inputs) { in.Lossless = quietLossless() }, ""},
		{"lossless, a port dropped", func(in *Inputs) {
			in.Lossless = quietLossless()
			in.Lossless.QdiscDrops = []PortDrops{{Node: "s0", Iface: "h0", Drops: 3}}
		}, "lossless"},
		{"lossless, a crossing lost", func(in *Inputs) { in.Lossless = quietLossless(); in.Lossless.LostEvents = 1 }, "pfc events"},
		{"lossless, above the model's headroom", func(in *Inputs) {
			in.Lossless = quietLossless()
			in.Lossless.Overruns = []PortOverrun{{Node: "s1", Iface: "s0", Over: 30000}}
		}, "pfc headroom"},
		{"lossless, above the file's headroom", func(in *Inputs) {
			in.Lossless = quietLossless()
			in.Lossless.Auto, in.Lossless.Overruns = false, []PortOverrun{{Node: "s1", Iface: "s0", Over: 30000}}
		}, ""},
		{"pauses p50 at the bound", func(in *Inputs) { in.Lossless = quietLossless(); in.Lossless.Lateness.P50 = 60 * time.Microsecond }, ""},
		{"pauses p50 above", func(in *Inputs) {
			in.Lossless = quietLossless()
			in.Lossless.Lateness.P50 = 61 * time.Microsecond
		}, "pfc apply lateness p50"},
		{"pauses p99 above", func(in *Inputs) {
			in.Lossless = quietLossless()
			in.Lossless.Lateness.P99 = 251 * time.Microsecond
		}, "pfc apply lateness p99"},
		{"no pause applied", func(in *Inputs) { in.Lossless = quietLossless(); in.Lossless.Lateness = LatenessStats{} }, ""},
	}
	for _, c := range cases {
		in := inputs()
		c.change(&in)
		v := Judge(in, lim)
		got := failed(v)
		switch {
		case c.fails == "" && !v.Faithful():
			t.Errorf("%s: degraded: %s", c.name, v)
		case c.fails != "" && (len(got) != 1 || got[0] != c.fails):
			t.Errorf("%s: failed %v, want only %s", c.name, got, c.fails)
		case c.fails != "" && (v.Faithful() || !strings.HasPrefix(v.String(), "degraded: "+c.fails)):
			t.Errorf("%s: verdict %q", c.name, v)
		}
	}
}
