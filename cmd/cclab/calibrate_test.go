package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cclab/internal/quiettest"
	"cclab/internal/runid"
	"cclab/kmod/lawload"
	"cclab/orchestrator/calibrate"
	"cclab/topology"
)

// calibrateTopology is a leaf-spine with 1- and 3-switch paths and 300 us
// on every link: 7 namespaces.
const calibrateTopology = `name: cal
kind: leafspine
leafspine: {leaves: 2, spines: 1, hosts_per_leaf: 2}
links:
  default: {rate: 100Mbit, buffer: 256KB, delay: 300us}
`

// execCclab runs the command with its stdout and stderr apart.
func execCclab(args ...string) (stdout, stderr string, err error) {
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err = root.ExecuteContext(context.Background())
	return out.String(), errb.String(), err
}

// leftovers lists what run id left behind: namespaces, its state
// directory, its BPF pins.
func leftovers(t *testing.T, id runid.ID) []string {
	t.Helper()
	var left []string
	ents, err := os.ReadDir("/run/netns")
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), id.Prefix()) {
			left = append(left, "netns "+e.Name())
		}
	}
	for _, p := range []string{id.StateDir(), id.BPFDir()} {
		if _, err := os.Stat(p); err == nil {
			left = append(left, p)
		}
	}
	return left
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCalibrateCommand: `cclab calibrate` measures each class of path of a
// delayed leaf-spine, derives the laws' parameters from the loaded floors,
// reports a pinned value as pinned, prints a `cclab cc load` line the laws
// accept, and leaves nothing behind.
func TestCalibrateCommand(t *testing.T) {
	file := writeFile(t, "cal.yaml", calibrateTopology)
	plan, err := topology.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	oneWay := map[[2]string]time.Duration{}
	paths, err := plan.PathDelays()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		oneWay[[2]string{p.Src, p.Dst}] = p.OneWay
	}

	// The floors are timing: a measurement made while the hypervisor took
	// CPU time is repeated (quiettest), the rest is checked once.
	var got struct {
		Calibration *calibrate.Result  `json:"calibration"`
		Derived     *calibrate.Derived `json:"derived"`
	}
	var largest int64
	quiettest.Retry(t, quiettest.Policy{Failures: 2, Tries: 3}, func(int) error {
		id := runid.New()
		out, stderr, err := execCclab("calibrate", file, "--json", "--run", string(id),
			"--samples-idle", "30", "--samples-loaded", "60", "--delay-engine", "auto", "--set", "hpcc.base_rtt_ns=13000")
		t.Logf("stderr:\n%s", stderr)
		if left := leftovers(t, id); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil || got.Calibration == nil || got.Derived == nil {
			t.Fatalf("json: %v\n%s", err, out)
		}
		cs := got.Calibration.Classes
		if len(cs) != 2 || cs[0].Switches != 1 || cs[1].Switches != 3 || cs[0].Pairs != 4 || cs[1].Pairs != 8 {
			t.Fatalf("classes %+v, want 1 switch (4 pairs) and 3 switches (8 pairs)", cs)
		}
		var errs []error
		largest = 0
		for _, c := range cs {
			t.Logf("%d switches (%s -> %s): configured %v, idle %v, floor %v, %.1f Mbit/s",
				c.Switches, c.Src, c.Dst, time.Duration(c.ConfiguredNs), time.Duration(c.Idle.P50Ns), time.Duration(c.FloorNs), float64(c.AchievedBps)/1e6)
			ow, ok := oneWay[[2]string{c.Src, c.Dst}]
			if !ok || ow != time.Duration(c.Switches+1)*300*time.Microsecond {
				t.Fatalf("%d switches: %s -> %s has one-way delay %v in the plan", c.Switches, c.Src, c.Dst, ow)
			}
			if c.ConfiguredNs != 2*int64(ow) {
				t.Errorf("%d switches: configured RTT %v, want 2 x %v", c.Switches, time.Duration(c.ConfiguredNs), ow)
			}
			if c.FloorNs < c.ConfiguredNs || c.FloorNs >= c.ConfiguredNs+int64(300*time.Microsecond) {
				errs = append(errs, fmt.Errorf("%d switches: loaded floor %v for %v configured", c.Switches, time.Duration(c.FloorNs), time.Duration(c.ConfiguredNs)))
			}
			if c.AchievedBps == 0 {
				errs = append(errs, fmt.Errorf("%d switches: no load got through", c.Switches))
			}
			// The laws' floor is the echo floor plus one full-size frame
			// at the 100 Mbit/s bottleneck; the load's srtt is recorded.
			if c.Floor() != c.FloorNs+121120 || c.TCPFloorNs == 0 {
				errs = append(errs, fmt.Errorf("%d switches: floor %v from echo floor %v (TCP srtt %v)", c.Switches, time.Duration(c.Floor()), time.Duration(c.FloorNs), time.Duration(c.TCPFloorNs)))
			}
			largest = max(largest, c.Floor())
		}
		return errors.Join(errs...)
	})
	d := got.Derived
	if want := (largest + 999) / 1000 * 1000; d.BaseRTTNs != want {
		t.Errorf("base_rtt_ns %d, want the largest floor %d rounded up to a microsecond, %d", d.BaseRTTNs, largest, want)
	}
	laws := map[string]bool{}
	for _, p := range d.Params {
		laws[p.Law] = true
		switch {
		case p.Law == "hpcc" && p.Name == "base_rtt_ns":
			if p.Pinned != "13000" || p.Value != d.BaseRTTNs {
				t.Errorf("hpcc.base_rtt_ns: %+v, want pinned 13000 (derived %d)", p, d.BaseRTTNs)
			}
		case p.Pinned != "":
			t.Errorf("%s.%s reported pinned (%s); only hpcc.base_rtt_ns is", p.Law, p.Name, p.Pinned)
		case p.Name == "base_rtt_ns" && p.Value != d.BaseRTTNs:
			t.Errorf("%s.base_rtt_ns = %d, want %d", p.Law, p.Value, d.BaseRTTNs)
		}
	}
	for _, l := range []string{"powertcp", "theta_powertcp", "hpcc", "swift"} {
		if !laws[l] {
			t.Errorf("no parameters derived for %s (all laws by default)", l)
		}
	}

	// The table form, for two laws: the classes, the parameters, and a
	// `cclab cc load` line whose settings the laws accept as they are.
	id2 := runid.New()
	out, stderr, err := execCclab("calibrate", file, "--run", string(id2), "--samples-idle", "20", "--samples-loaded", "40",
		"--laws", "swift,hpcc", "--set", "hpcc.base_rtt_ns=13000")
	if left := leftovers(t, id2); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	t.Logf("table:\n%s", out)
	if !strings.Contains(stderr, "calibrate: 3-switch paths") {
		t.Errorf("no progress on stderr:\n%s", stderr)
	}
	for _, s := range []string{"SWITCHES", "h0 -> h1", "h0 -> h2", "13000 (pinned; derived", "per_hop_ns"} {
		if !strings.Contains(out, s) {
			t.Errorf("table lacks %q", s)
		}
	}
	var line []string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 3 && f[0] == "cclab" && f[1] == "cc" && f[2] == "load" {
			line = f[3:]
		}
	}
	if len(line) < 3 || line[0] != "swift" || line[1] != "hpcc" || line[len(line)-1] != "hpcc.base_rtt_ns=13000" {
		t.Fatalf("cc load line %v, want the laws, the derived settings, then the pinned one", line)
	}
	if strings.Contains(strings.Join(line, " "), "powertcp") {
		t.Errorf("cc load line %v has a law not asked for", line)
	}
	if _, err := lawload.Resolve(line[:2], line[2:]); err != nil {
		t.Errorf("the laws refuse the printed settings: %v", err)
	}
}

// TestCalibrateRejectsBadInput: a malformed topology file or bad flags
// fail with an error naming what is wrong, before anything is built.
func TestCalibrateRejectsBadInput(t *testing.T) {
	good := writeFile(t, "good.yaml", calibrateTopology)
	bad := writeFile(t, "bad.yaml", strings.Replace(calibrateTopology, "rate: 100Mbit", "rate: fast", 1))
	cases := []struct {
		args []string
		want string
	}{
		{[]string{bad}, "bad.yaml:5:19: rate: \"fast\""},
		{[]string{writeFile(t, "kind.yaml", "name: x\nkind: ring\n")}, "kind.yaml:2:1: kind \"ring\""},
		{[]string{writeFile(t, "yaml.yaml", "name: [x\n")}, "yaml.yaml"},
		{[]string{filepath.Join(t.TempDir(), "none.yaml")}, "read topology"},
		{[]string{good, "--delay-engine", "tc"}, "--delay-engine"},
		{[]string{good, "--laws", "cubic"}, `unknown law "cubic"`},
		{[]string{good, "--set", "nosuch=1"}, `"nosuch"`},
		{[]string{good, "--set", "hpcc.eta_ppm=2"}, "hpcc eta_ppm=2 ppm: outside its range 100000..1000000"},
		{[]string{good, "--laws", "dctcp", "--set", "swift.hops=2"}, "law swift is not among dctcp"},
		{[]string{good, "--samples-loaded", "0"}, "--samples-loaded"},
	}
	for _, c := range cases {
		id := runid.New()
		args := append([]string{"calibrate", "--run", string(id)}, c.args...)
		_, stderr, err := execCclab(args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("cclab %s: error %v, want one containing %q", strings.Join(args, " "), err, c.want)
		}
		if strings.Contains(stderr, "building") {
			t.Errorf("cclab %s started building:\n%s", strings.Join(args, " "), stderr)
		}
		if left := leftovers(t, id); len(left) > 0 {
			t.Errorf("cclab %s left %v", strings.Join(args, " "), left)
		}
	}
}
