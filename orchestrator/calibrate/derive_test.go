package calibrate

import (
	"slices"
	"strings"
	"testing"

	"cclab/kmod/law"
	"cclab/topology"
)

// deriveFloors derives the laws' parameters from class floors (ns, what
// Class.Floor returns) given per switch count, on plan; no network is
// built.
func deriveFloors(t *testing.T, plan *topology.Plan, floors map[int]int64, pinned law.Settings) *Derived {
	t.Helper()
	r := &Result{}
	for sw, f := range floors {
		r.Classes = append(r.Classes, Class{Switches: sw, FloorNs: f})
	}
	d, err := Derive(r, plan, []string{"powertcp", "hpcc", "swift", "timely", "dcqcn"}, pinned)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func loadPlan(t *testing.T, path string) *topology.Plan {
	t.Helper()
	plan, err := topology.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// param is the derived value of law.name and whether it was derived.
func param(d *Derived, law, name string) (Param, bool) {
	i := slices.IndexFunc(d.Params, func(p Param) bool { return p.Law == law && p.Name == name })
	if i < 0 {
		return Param{}, false
	}
	return d.Params[i], true
}

// The worked example of docs/calibration.md: the default fat-tree's
// floors give the table's values, Swift's additive increase the paper's
// 50 Mbit/s per RTT at 100 Gbit/s scaled to 100 Mbit/s over 12.143 ms.
func TestDeriveWorkedExample(t *testing.T) {
	plan := loadPlan(t, "../../topologies/fattree-k4-100m.yaml")
	d := deriveFloors(t, plan, map[int]int64{1: 4101000, 3: 8139000, 5: 12143000}, nil)
	for _, c := range []struct {
		law, name string
		want      int64
	}{
		{"hpcc", "base_rtt_ns", 12143000},
		{"swift", "per_hop_ns", 2010500},
		{"swift", "base_target_ns", 5127000},
		{"swift", "hops", 5},
		{"hpcc", "int_max_age_ns", 30000000},
		{"swift", "host_bw_mbps", 100},
		{"swift", "fs_range_ns", 6071500},
		{"swift", "vai_ai_div", 30357},
		{"hpcc", "vai_ai_div", 1036},
		// 50e6 x 100e6 / 100e9 x 12.143e-3 / 8 = 75.89 B per RTT
		{"swift", "ai_bytes", 76},
	} {
		p, ok := param(d, c.law, c.name)
		if !ok || p.Value != c.want {
			t.Errorf("%s.%s = %d (derived %v), want %d", c.law, c.name, p.Value, ok, c.want)
		}
	}
	if d.SwiftAiBytes != 76 {
		t.Errorf("swift_ai_bytes %d, want 76", d.SwiftAiBytes)
	}
	if p, _ := param(d, "swift", "ai_bytes"); !strings.Contains(p.Rule, "50 Mbit/s") {
		t.Errorf("ai_bytes rule %q does not name the paper's 50 Mbit/s", p.Rule)
	}
	if _, ok := param(d, "hpcc", "ai_bytes"); ok {
		t.Errorf("ai_bytes derived for hpcc, which has none")
	}
}

// Swift's additive increase on the 1-switch star of the reproduction
// suite is the BDP / 2000 (HPCC's W_AI at its defaults), at least one
// byte on a tiny path, pinned by the experiment like any other, and not
// derived when the hosts differ in rate.
func TestDeriveSwiftAI(t *testing.T) {
	star := loadPlan(t, "../../topologies/repro-star-16-1ms.yaml")
	// 100 Mbit/s x 4.163 ms = 52 037.5 B: 26.02 B per RTT.
	d := deriveFloors(t, star, map[int]int64{1: 4163000}, nil)
	if p, ok := param(d, "swift", "ai_bytes"); !ok || p.Value != 26 {
		t.Errorf("star: swift.ai_bytes %d (derived %v), want 26", p.Value, ok)
	}
	if !slices.Contains(d.Settings(), "swift.ai_bytes=26") {
		t.Errorf("star: settings %v lack swift.ai_bytes=26", d.Settings())
	}

	d = deriveFloors(t, star, map[int]int64{1: 4163000}, law.Settings{{Law: law.Swift, Param: "ai_bytes", Value: 1448}})
	if p, ok := param(d, "swift", "ai_bytes"); !ok || p.Value != 26 || p.Pinned != "1448" {
		t.Errorf("pinned: %+v, want value 26 pinned to 1448", p)
	}
	if slices.ContainsFunc(d.Settings(), func(s string) bool { return strings.HasPrefix(s, "swift.ai_bytes=") }) {
		t.Errorf("pinned: settings %v register the derived ai_bytes", d.Settings())
	}

	tiny := starOf(t, "tiny", "{rate: 10Mbit, buffer: 64KB, delay: 10us}", "{rate: 10Mbit, buffer: 64KB, delay: 10us}")
	// 10 Mbit/s x 50 us = 62.5 B: 0.03 B per RTT, rounded up to 1.
	d = deriveFloors(t, tiny, map[int]int64{1: 50000}, nil)
	if p, ok := param(d, "swift", "ai_bytes"); !ok || p.Value != 1 {
		t.Errorf("tiny path: swift.ai_bytes %d (derived %v), want 1", p.Value, ok)
	}

	mixed := starOf(t, "mixed", "{rate: 100Mbit, buffer: 640KB, delay: 1ms}", "{rate: 1Gbit, buffer: 640KB, delay: 1ms}")
	d = deriveFloors(t, mixed, map[int]int64{1: 4163000}, nil)
	for _, ln := range [][2]string{{"swift", "ai_bytes"}, {"swift", "host_bw_mbps"}, {"hpcc", "vai_ai_div"}} {
		if p, ok := param(d, ln[0], ln[1]); ok {
			t.Errorf("hosts at different rates: %s.%s derived (%d)", ln[0], ln[1], p.Value)
		}
	}
	if d.SwiftAiBytes != 0 {
		t.Errorf("hosts at different rates: swift_ai_bytes %d", d.SwiftAiBytes)
	}
	// Swift's VAI token is in ns of delay: it needs no rate.
	if _, ok := param(d, "swift", "vai_ai_div"); !ok {
		t.Errorf("hosts at different rates: swift.vai_ai_div not derived")
	}
}

// starOf is a 2:1 star with the given host and receiver links (YAML flow
// maps, as in topologies/).
func starOf(t *testing.T, name, host, receiver string) *topology.Plan {
	t.Helper()
	plan, err := topology.Parse(name+".yaml", []byte("name: "+name+"\nkind: star\nstar: {senders: 2}\nlinks:\n  host: "+host+"\n  receiver: "+receiver+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// A class's floor is its loaded echo median plus one full-size frame at
// its bottleneck (121.12 us for 1514 B at 100 Mbit/s; 12.112 us at 1
// Gbit/s), and the base RTT follows it; the TCP srtt is not an input.
func TestFloorAddsBottleneckSerialisation(t *testing.T) {
	for _, c := range []struct {
		file string
		ser  int64
	}{
		{"../../topologies/fattree-k4-100m.yaml", 121120},
		{"../../topologies/fattree-k4-1g.yaml", 12112},
	} {
		plan := loadPlan(t, c.file)
		cs, err := Classes(plan)
		if err != nil {
			t.Fatal(err)
		}
		r := &Result{}
		for i, k := range cs {
			if k.MTUSerialiseNs != c.ser {
				t.Errorf("%s, %d switches: MTU serialisation %d ns, want %d", c.file, k.Switches, k.MTUSerialiseNs, c.ser)
			}
			k.FloorNs = k.ConfiguredNs + 50000 + int64(i)*1000
			k.TCPFloorNs = k.ConfiguredNs + 900000 // an srtt with a delayed-ACK wait in it
			if k.Floor() != k.FloorNs+c.ser {
				t.Errorf("%d switches: Floor %d, want %d + %d", k.Switches, k.Floor(), k.FloorNs, c.ser)
			}
			r.Classes = append(r.Classes, k)
		}
		d, err := Derive(r, plan, []string{"hpcc"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		last := r.Classes[len(r.Classes)-1]
		if want := roundUpUs(last.FloorNs + c.ser); d.BaseRTTNs != want {
			t.Errorf("%s: base RTT %d, want the longest class's echo floor + serialisation %d", c.file, d.BaseRTTNs, want)
		}
	}
}
