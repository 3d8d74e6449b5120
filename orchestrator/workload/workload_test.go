package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"cclab/internal/units"
	"cclab/orchestrator/experiment"
	"cclab/topology"
)

func TestCDFMeanMatchesFile(t *testing.T) {
	for _, name := range []string{"websearch", "fb_hadoop"} {
		c, err := LoadCDF(name)
		if err != nil {
			t.Fatal(err)
		}
		if c.StatedMean == 0 {
			t.Fatalf("%s: no stated mean", name)
		}
		if d := math.Abs(c.Mean()-c.StatedMean) / c.StatedMean; d > 1e-6 {
			t.Errorf("%s: trapezoid mean %.1f, file states %.1f", name, c.Mean(), c.StatedMean)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		const n = 1_000_000
		var sum float64
		for range n {
			s := c.Sample(rng)
			if s < 1 || float64(s) > c.Size[len(c.Size)-1] {
				t.Fatalf("%s: sample %d out of range", name, s)
			}
			sum += float64(s)
		}
		mean := sum / n
		if d := math.Abs(mean-c.StatedMean) / c.StatedMean; d > 0.02 {
			t.Errorf("%s: sample mean %.0f, file states %.0f (%.1f%% off)", name, mean, c.StatedMean, 100*d)
		}
		t.Logf("%s: sample mean %.0f, stated %.0f", name, mean, c.StatedMean)
	}
}

func TestCDFInterpolation(t *testing.T) {
	c, err := ParseCDF("t", []byte("# Mean: 1\n0 0\n100 50\n300 100\n"))
	if err != nil {
		t.Fatal(err)
	}
	for r, want := range map[float64]uint64{0: 1, 1: 2, 25: 50, 49.99: 99, 50: 100, 75: 200, 99.999: 299} {
		if got := c.At(r); got != want {
			t.Errorf("At(%v) = %d, want %d", r, got, want)
		}
	}
	for _, bad := range []string{"0 0\n", "0 0\n10 50\n", "0 0\n10 50\n5 100\n", "0 0\nx 100\n", "0 0\n1 2 3\n"} {
		if _, err := ParseCDF("bad", []byte(bad)); err == nil {
			t.Errorf("accepted CDF %q", bad)
		}
	}
}

// star builds a plan by hand: n hosts on one switch at rate.
func star(n int, rate units.Rate) *topology.Plan {
	p := &topology.Plan{Name: "star", Kind: "star", Nodes: []topology.Node{{Name: "s", Role: topology.Switch}}}
	for i := range n {
		h := fmt.Sprintf("h%d", i)
		p.Nodes = append(p.Nodes, topology.Node{Name: h, Role: topology.Host})
		p.Links = append(p.Links, topology.Link{A: topology.Port{Node: h, Iface: "eth0"}, B: topology.Port{Node: "s", Iface: h}, Rate: rate})
	}
	return p
}

func parse(t *testing.T, text string) *experiment.Experiment {
	t.Helper()
	e, err := experiment.Parse("e.yaml", []byte("name: t\ntopology: x.yaml\n"+text))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestPoissonLoad(t *testing.T) {
	for _, cdf := range []string{"websearch", "fb_hadoop"} {
		const secs = 100
		e := parse(t, fmt.Sprintf("workload:\n  - name: bg\n    poisson: {cdf: %s, load: 30%%, stop: %ds}\n", cdf, secs))
		p := star(16, 1e9)
		flows, err := Generate(e, p, "cubic")
		if err != nil {
			t.Fatal(err)
		}
		var bytes float64
		perHost := map[string]int{}
		for _, f := range flows {
			if f.Src == f.Dst {
				t.Fatalf("flow %d to itself", f.ID)
			}
			if f.Start < 0 || f.Start >= secs*time.Second {
				t.Fatalf("flow %d starts at %v", f.ID, f.Start)
			}
			bytes += float64(f.Size)
			perHost[f.Src]++
		}
		load := bytes * 8 / (secs * 16 * 1e9)
		if math.Abs(load-0.3) > 0.3*0.05 {
			t.Errorf("%s: offered load %.3f, want 0.30 within 5%%", cdf, load)
		}
		c, _ := LoadCDF(cdf)
		wantPerHost := secs * 1e9 / float64(MeanGap(c.Mean(), 1e9, 0.3))
		for h, n := range perHost {
			if math.Abs(float64(n)-wantPerHost) > 5*math.Sqrt(wantPerHost) {
				t.Errorf("%s: host %s started %d flows, want about %.0f", cdf, h, n, wantPerHost)
			}
		}
		t.Logf("%s: %d flows, offered load %.3f", cdf, len(flows), load)
	}
}

func TestSameSeedSameFlows(t *testing.T) {
	text := `workload:
  - name: long
    long: {src: h0, dst: h1, stop: 1s}
  - name: in
    incast: {dst: h1, fan_in: 5, size: 10KB, stagger: 20us, per_stagger: 2}
  - name: bg
    poisson: {cdf: fb_hadoop, load: 50%, stop: 1s}
  - name: q
    query: {rate: 200, fan_in: 3, size: 2KB, stop: 1s}
`
	p := star(8, 1e9)
	a, err := Generate(parse(t, "seed: 42\n"+text), p, "cubic")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(parse(t, "seed: 42\n"+text), p, "cubic")
	c, _ := Generate(parse(t, "seed: 43\n"+text), p, "cubic")
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed gave different flows")
	}
	if reflect.DeepEqual(a, c) {
		t.Fatal("different seeds gave the same flows")
	}
	for i, f := range a {
		if f.ID != i || (i > 0 && f.Start < a[i-1].Start) {
			t.Fatalf("flows not numbered in start order at %d", i)
		}
	}
}

func TestIncastStagger(t *testing.T) {
	e := parse(t, "workload:\n  - name: in\n    cc: reno\n    incast: {dst: h0, fan_in: 9, size: 64KB, start: 1ms, stagger: 20us, per_stagger: 2, repeat: 2, every: 10ms}\n")
	flows, err := Generate(e, star(5, 1e9), "cubic")
	if err != nil {
		t.Fatal(err)
	}
	if len(flows) != 18 {
		t.Fatalf("%d flows, want 18", len(flows))
	}
	senders := map[string]int{}
	for i, f := range flows[:9] {
		want := time.Millisecond + time.Duration(i/2)*20*time.Microsecond
		if f.Start != want || f.Dst != "h0" || f.Size != 64000 || f.CC != "reno" || f.Group != "in" {
			t.Fatalf("flow %d: %+v, want start %v", i, f, want)
		}
		senders[f.Src]++
	}
	// 9 flows over the 4 other hosts: each sends 2 or 3.
	if len(senders) != 4 {
		t.Fatalf("senders %v", senders)
	}
	if flows[9].Start != 11*time.Millisecond {
		t.Fatalf("repeat starts at %v", flows[9].Start)
	}
}

func TestGenerateBadHosts(t *testing.T) {
	cases := map[string]string{
		"workload:\n  - name: l\n    long: {src: h0, dst: h9, stop: 1s}\n":                             "e.yaml:5: no node \"h9\"",
		"workload:\n  - name: l\n    long: {src: s, dst: h1, stop: 1s}\n":                              "e.yaml:5: s is a switch",
		"workload:\n  - name: i\n    incast: {dst: hx, fan_in: 2, size: 1KB}\n":                        "e.yaml:5: no node \"hx\"",
		"workload:\n  - name: b\n    poisson: {cdf: nope, load: 10%, stop: 1s}\n":                      "e.yaml:5: b: cdf \"nope\"",
		"workload:\n  - name: b\n    poisson: {cdf: websearch, load: 10%, stop: 1s, hosts: [h0, q]}\n": "e.yaml:5: no node \"q\"",
	}
	for in, want := range cases {
		_, err := Generate(parse(t, in), star(3, 1e9), "cubic")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", in, err, want)
		}
	}
}
