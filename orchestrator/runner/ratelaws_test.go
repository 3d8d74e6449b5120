package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"cclab/analysis/metrics"
	"cclab/analysis/pcapflows"
	"cclab/analysis/series"
	"cclab/internal/quiettest"
	"cclab/internal/runid"
	"cclab/kmod/lawload"
)

// The rate-based laws (TIMELY, DCQCN) on a real bottleneck with
// propagation delay (cclab's delay line here, 4 ms RTT, BDP 50 KB at
// 100 Mbit/s), registered by the run with the calibration's time
// constants: two long flows, the second starting 1 s after the first,
// share the link (measured over [8 s, 11.5 s]: DCQCN's timers scale with
// the time scale, 38 ms here, and it needs seconds to converge), fill it, and
// hold the bottleneck
// queue where each law puts it: DCQCN below RED's Kmax (a law that
// missed its marks would sit at the buffer), TIMELY
// below the buffer (it has no queue target: the PowerTCP paper, section
// 2; measured 68-74 KB here on 2026-11-25, 98-153 KB on 2026-11-26).
func TestRateLawsShareABottleneck(t *testing.T) {
	topo := topologyFile(t, `name: dumbbell-delay
kind: dumbbell
dumbbell: {hosts_per_side: 2}
links:
  host:       {rate: 1Gbit, buffer: 256KB, delay: 500us}
  bottleneck: {rate: 100Mbit, buffer: 256KB, delay: 1ms}
`)
	// DCQCN's fairness is a random process (RED's marks) that CPU time
	// stolen by the hypervisor perturbs further (Jain 0.725 once in make
	// test, on a run judged degraded): such a try does not count.
	quiettest.Retry(t, quiettest.Policy{Failures: 2, Tries: 3}, func(int) error {
		return rateLawsShareABottleneck(t, topo)
	})
}

func rateLawsShareABottleneck(t *testing.T, topo string) error {
	id := runid.New()
	tm, dq := "t"+string(id)+"tm", "t"+string(id)+"dq" // registrations are machine-wide
	const kmin, kmax = 33_000, 133_000                 // 0.67 and 2.67 BDPs (experiments/baselines.yaml)
	exp := filepath.Join(t.TempDir(), "exp.yaml")
	if err := os.WriteFile(exp, []byte(fmt.Sprintf(`name: rate-laws
topology: %s
compare: [%s, %s]
variants:
  %s: {law: timely}
  %s: {law: dcqcn}
laws: {}
timeout: 30s
switch:
  ecn_threshold: 0B
  ecn_profiles:
    %s: {ecn_red: {kmin: %dB, kmax: %dB, pmax: 0.2}}
workload:
  - name: a
    long: {src: h0, dst: h2, start: 0, stop: 12s}
  - name: b
    long: {src: h1, dst: h3, start: 1s, stop: 12s}
`, topo, tm, dq, tm, dq, dq, kmin, kmax)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := runWithOwnLaws(t, exp, id)
	var errs []error
	for _, c := range []struct {
		name, law string
		qlo, qhi  float64 // bounds of the bottleneck queue's median, bytes
		fair      float64 // Jain's index at least
	}{
		// DCQCN converges slowly: its fairness comes from RED's random
		// marks, one CNP per 34 ms at most, and increase events every
		// 38 ms (timer) or 1.6 s (10 MB byte counter at 50 Mbit/s): the
		// papers' tens of microseconds times the time scale, 700 on this
		// 2-switch path (19 ms before 2026-11-26, x 350). Measured
		// 0.80-0.85 and 0.98-0.99 over [8 s, 11.5 s] at x 350 (0.798 and
		// 0.725 once each in make test), 0.942 at x 700; a starved flow
		// gives 0.5-0.6.
		// Its queue median (upper sixth of s0's samples) measured 7.5-35
		// KB, around and below Kmin 33 KB, with the link full: bounded
		// above by Kmax (at the buffer, 256 KB, when the marks are
		// missed); below, the rate check says the link stays full.
		{dq, "dcqcn", 0, kmax, 0.75},
		{tm, "timely", 0, 256_000, 0.9},
	} {
		dir := filepath.Join(out, string(id), c.name)
		var rj struct {
			ZeroNs        int64 `json:"workload_zero_ns"`
			ClockOffsetNs int64 `json:"clock_offset_ns"`
			CC            map[string]struct {
				Params map[string]any `json:"params"`
			} `json:"cc"`
			Fidelity struct {
				Verdict string `json:"verdict"`
			} `json:"fidelity"`
		}
		readRunJSON(t, dir, &rj)
		// Rates over [3 s, 5.5 s] of the workload, from the receivers'
		// captures (the capture clock is CLOCK_REALTIME).
		from := rj.ZeroNs + rj.ClockOffsetNs + 8e9
		to := from + 3.5e9
		var rates []float64
		for _, h := range []string{"h2", "h3"} {
			files, _ := filepath.Glob(filepath.Join(dir, "pcap", h+"-*.pcap"))
			if len(files) != 1 {
				t.Fatalf("%s: captures of %s: %v", c.name, h, files)
			}
			var bytes uint64
			if _, err := pcapflows.ReadFile(context.Background(), files[0], pcapflows.Options{Observe: func(pk *pcapflows.Packet) {
				if pk.Time >= from && pk.Time < to {
					bytes += uint64(pk.NewBytes)
				}
			}}); err != nil {
				t.Fatal(err)
			}
			rates = append(rates, float64(bytes)*8/3.5/1e6)
		}
		qs, err := series.ReadQueues(filepath.Join(dir, "queues.csv"), rj.ClockOffsetNs, rj.ZeroNs+rj.ClockOffsetNs)
		if err != nil {
			t.Fatal(err)
		}
		var q []float64
		for _, s := range qs {
			if s.Port.Node != "s0" {
				continue
			}
			for _, pt := range s.Samples {
				if pt.T >= 8e9 && pt.T < 11.5e9 {
					q = append(q, pt.V)
				}
			}
		}
		// s0's ports: the bottleneck's and two idle host ports (their
		// samples are 0), so the median of s0's busiest port is wanted:
		// take the upper third of the samples.
		sort.Float64s(q)
		if len(q) == 0 {
			t.Fatalf("%s: no queue samples of s0", c.name)
		}
		med := q[len(q)*5/6]
		j := metrics.Jain(rates)
		t.Logf("%s (%s, verdict %s): %.1f and %.1f Mbit/s, Jain %.3f, bottleneck queue median %.0f B; params %v",
			c.name, c.law, rj.Fidelity.Verdict, rates[0], rates[1], j, med, rj.CC[c.name].Params)
		if rates[0]+rates[1] < 80 {
			errs = append(errs, fmt.Errorf("%s: together %.1f Mbit/s over a 100 Mbit/s bottleneck", c.name, rates[0]+rates[1]))
		}
		if j < c.fair {
			errs = append(errs, fmt.Errorf("%s: Jain %.3f < %.2f after 7 s together", c.name, j, c.fair))
		}
		if med < c.qlo || med > c.qhi {
			errs = append(errs, fmt.Errorf("%s: bottleneck queue median %.0f B outside [%.0f, %.0f]", c.name, med, c.qlo, c.qhi))
		}
	}
	return errors.Join(errs...)
}

// runWithOwnLaws runs the experiment file exp as run id with the laws it
// registers pinned in a directory of the test's own (unloaded at the
// end), checks that nothing of the run is left, and returns the output
// directory.
func runWithOwnLaws(t *testing.T, exp string, id runid.ID) string {
	t.Helper()
	p, err := Prepare(exp)
	if err != nil {
		t.Fatal(err)
	}
	cleanAfter(t, id)
	laws := lawload.Options{PinDir: runid.New().BPFDir()}
	t.Cleanup(func() {
		if _, err := lawload.Unload(nil, laws); err != nil {
			t.Errorf("unload: %v", err)
		}
		os.Remove(laws.PinDir)
	})
	out := t.TempDir()
	if _, err := Run(context.Background(), p, Options{Out: out, ID: id, Log: io.Discard, RTTSamples: 20, Laws: laws}); err != nil {
		t.Fatal(err)
	}
	noLeftovers(t, id)
	return out
}
