package experiment

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"cclab/internal/units"
)

const good = `name: t
topology: ../topologies/star.yaml
seed: 7
compare: [cubic, bbr]
hosts:
  tcp_timestamps: false
  gso_max_size: 16KiB
workload:
  - name: long
    long: {src: h0, dst: h1, start: 0, stop: 2s}
  - name: incast
    cc: reno
    incast: {dst: h1, fan_in: 4, size: 64KB, start: 10ms, stagger: 20us, per_stagger: 2}
  - name: bg
    poisson: {cdf: websearch, load: 30%, start: 0, stop: 1s}
  - name: q
    query: {rate: 100, fan_in: 3, size: 2KB, stop: 1s}
`

func TestParseGood(t *testing.T) {
	e, err := Parse("experiments/t.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if e.Seed != 7 || e.CC != "cubic" || e.Timeout.D() != DefaultTimeout || e.Capture.Snaplen != 128 {
		t.Fatalf("defaults: %+v", e)
	}
	if e.TopologyPath != "topologies/star.yaml" {
		t.Fatalf("topology path %q", e.TopologyPath)
	}
	if e.Hosts.GSOMaxSize != 16384 || On(e.Hosts.TCPTimestamps, true) || !On(e.Hosts.ECN, true) || e.Hosts.NICQueues != DefaultNICQueues {
		t.Fatalf("hosts %+v", e.Hosts)
	}
	in := e.Workload[1].Incast
	if in.FanIn != 4 || in.Size != 64000 || in.Stagger.D() != 20*time.Microsecond || in.PerStagger != 2 || in.Repeat != 1 {
		t.Fatalf("incast %+v", in)
	}
	if e.Workload[1].Line != 11 || in.Line != 13 {
		t.Fatalf("lines: entry %d incast %d", e.Workload[1].Line, in.Line)
	}
	if e.Workload[2].Poisson.Load != 0.3 {
		t.Fatalf("load %v", e.Workload[2].Poisson.Load)
	}
	if got := strings.Join(e.CCs(), ","); got != "cubic,bbr,reno" {
		t.Fatalf("ccs %s", got)
	}
}

func TestParseSwitch(t *testing.T) {
	src := good + "switch:\n  int: true\n  ecn_threshold: 30KB\ntrace: true\n"
	src = strings.Replace(src, "  tcp_timestamps: false\n", "", 1)
	e, err := Parse("f.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	sw := e.Switch
	if sw == nil || !sw.INT || sw.ECNThreshold != 30000 || sw.QueueSample.D() != DefaultQueueSample || !e.Trace {
		t.Fatalf("switch %+v trace %v", sw, e.Trace)
	}
	// INT wants all 40 option bytes: timestamps default to off.
	if On(e.Hosts.TCPTimestamps, true) {
		t.Fatal("INT left TCP timestamps on by default")
	}
	e, err = Parse("f.yaml", []byte(good))
	if err != nil || e.Switch != nil || e.Trace {
		t.Fatalf("no switch section: %+v %v", e.Switch, err)
	}
}

// ECN marking: the switch's own (a step, or RED with HPCC's defaults for
// what it leaves out), replaced in the runs of compared names that have a
// profile of their own (a variant's by its name); the profile in force
// says where it came from.
func TestParseECNProfiles(t *testing.T) {
	src := good + `variants:
  hpcc_x: {law: hpcc, set: {vai_enable: 1}}
switch:
  ecn_red: {kmin: 20KB, kmax: 80KB, pmax: "50%"}
  ecn_profiles:
    cubic: {ecn_threshold: 0B}
    bbr:
      ecn_red: {kmin: 100KB, kmax: 400KB, rate: 25Gbit}
    hpcc_x: {ecn_red: {kmin: 10KB, kmax: 40KB, rate: 1Gbit}}
`
	src = strings.Replace(src, "compare: [cubic, bbr]", "compare: [cubic, bbr, hpcc_x, reno]", 1)
	e, err := Parse("f.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cc, from  string
		threshold units.Size
		red       *RED
	}{
		{"cubic", "ecn_profiles.cubic", 0, nil},
		{"bbr", "ecn_profiles.bbr", 0, &RED{Kmin: 100_000, Kmax: 400_000, Pmax: 0.2, Rate: units.Rate(25e9)}},
		{"hpcc_x", "ecn_profiles.hpcc_x", 0, &RED{Kmin: 10_000, Kmax: 40_000, Pmax: 0.2, Rate: units.Rate(1e9)}},
		{"reno", "switch", 0, &RED{Kmin: 20_000, Kmax: 80_000, Pmax: 0.5}},
	} {
		p, from := e.Switch.Profile(c.cc)
		if from != c.from || p.ECNThreshold != c.threshold || (p.ECNRed == nil) != (c.red == nil) {
			t.Errorf("%s: profile %+v from %s, want threshold %v red %+v from %s", c.cc, p, from, c.threshold, c.red, c.from)
			continue
		}
		if r := p.ECNRed; r != nil && (r.Kmin != c.red.Kmin || r.Kmax != c.red.Kmax || r.Pmax != c.red.Pmax || r.Rate != c.red.Rate) {
			t.Errorf("%s: RED %+v, want %+v", c.cc, *r, *c.red)
		}
	}
	// QCN: the switch's congestion points, or a compared name's own
	// (alone, or beside its marking); sample defaults to 150KB.
	e, err = Parse("f.yaml", []byte(good+`switch:
  int: true
  qcn: {qeq: 64KB}
  ecn_profiles:
    cubic: {ecn_threshold: 0B}
    bbr: {ecn_threshold: 30KB, qcn: {qeq: 10KB, sample: 15KB, rate: 1Gbit}}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cc  string
		qcn *QCN
	}{
		{"cubic", nil},
		{"bbr", &QCN{Qeq: 10_000, Sample: 15_000, Rate: units.Rate(1e9)}},
	} {
		p, _ := e.Switch.Profile(c.cc)
		if (p.QCN == nil) != (c.qcn == nil) || p.QCN != nil && (p.QCN.Qeq != c.qcn.Qeq || p.QCN.Sample != c.qcn.Sample || p.QCN.Rate != c.qcn.Rate) {
			t.Errorf("%s: QCN %+v, want %+v", c.cc, p.QCN, c.qcn)
		}
	}
	if q := e.Switch.QCN; q == nil || q.Qeq != 64_000 || q.Sample != DefaultQCNSample {
		t.Errorf("switch QCN %+v, want qeq 64KB sample %v", q, DefaultQCNSample)
	}

	e, err = Parse("f.yaml", []byte(good+"switch: {ecn_threshold: 75KB}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p, from := e.Switch.Profile("bbr"); from != "switch" || p.ECNThreshold != 75_000 || p.ECNRed != nil || p.TCD != nil {
		t.Fatalf("step profile %+v from %s", p, from)
	}

	// TCD is the switch's, in every compared name's profile (its own too).
	e, err = Parse("f.yaml", []byte(good+`switch:
  int: true
  tcd: {max_ton: 2ms, threshold: 75KB}
  ecn_profiles:
    cubic: {ecn_threshold: 30KB}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, cc := range []string{"cubic", "bbr"} {
		if p, _ := e.Switch.Profile(cc); p.TCD == nil || p.TCD.MaxTon.D() != 2*time.Millisecond || p.TCD.Threshold != 75_000 {
			t.Errorf("%s: TCD %+v, want max_ton 2ms threshold 75KB", cc, p.TCD)
		}
	}
}

// Every bad input is reported with the file and the line of the culprit.
func TestParseBad(t *testing.T) {
	head := "name: t\ntopology: x.yaml\nworkload:\n"
	cases := []struct{ in, want string }{
		{"", "empty experiment file"},
		{"name: t\ntopology: x.yaml\nbogus: 1\n", "f.yaml:3: unknown field \"bogus\""},
		{"topology: x.yaml\nworkload: []\n", "f.yaml:1: missing name"},
		{"name: t\nworkload: []\n", "f.yaml:1: missing topology"},
		{"name: t\ntopology: x.yaml\n", "f.yaml:1: empty workload"},
		{"name: t\ntopology: x.yaml\ncc: Cubic!\nworkload: []\n", "f.yaml:1: congestion control \"Cubic!\""},
		{"name: t\ntopology: x.yaml\ncompare: [cubic, cubic]\nworkload: []\n", "f.yaml:1: compare lists cubic twice"},
		{"name: t\ntopology: x.yaml\ntimeout: 5\nworkload: []\n", "f.yaml:3: duration \"5\""},
		{"name: t\ntopology: x.yaml\nhosts:\n  ecn: maybe\n", "f.yaml:4: cannot unmarshal"},
		{"name: t\ntopology: x.yaml\nhosts:\n  jumbo: true\n", "f.yaml:4: unknown field \"jumbo\""},
		{"name: t\ntopology: x.yaml\ncapture: {snaplen: 10B}\nworkload: []\n", "f.yaml:1: capture snaplen"},
		{head + "  - long: {src: a, dst: b, stop: 1s}\n", "f.yaml:4: workload entry without a name"},
		{head + "  - name: a\n", "f.yaml:4: workload entry \"a\": give exactly one"},
		{head + "  - name: a\n    long: {src: a, dst: b, stop: 1s}\n    incast: {dst: a, fan_in: 1, size: 1KB}\n", "f.yaml:4: workload entry \"a\": give exactly one"},
		{head + "  - name: a\n    long: {src: a, dst: b, stop: 1s}\n  - name: a\n    long: {src: a, dst: b, stop: 1s}\n", "f.yaml:6: workload entry \"a\" already defined at line 4"},
		{head + "  - name: a\n    long: {src: a, dst: b, stop: 1s, rate: 1Gbit}\n", "f.yaml:5: unknown field \"rate\""},
		{head + "  - name: a\n    long: {src: a, dst: a, stop: 1s}\n", "f.yaml:5: a: src and dst are both a"},
		{head + "  - name: a\n    long: {src: a, dst: b}\n", "f.yaml:5: a: missing stop"},
		{head + "  - name: a\n    long: {src: a, dst: b, start: 2s, stop: 1s}\n", "f.yaml:5: a: stop 1s is not after start 2s"},
		{head + "  - name: a\n    long:\n      src: a\n      dst: b\n      stop: 1 fortnight\n", "f.yaml:8: duration \"1 fortnight\""},
		{head + "  - name: a\n    incast: {dst: h1, size: 1KB}\n", "f.yaml:5: a: incast needs fan_in"},
		{head + "  - name: a\n    incast: {dst: h1, fan_in: 2}\n", "f.yaml:5: a: incast needs size"},
		{head + "  - name: a\n    incast:\n      dst: h1\n      fan_in: 2\n      size: 1000\n", "f.yaml:8: size \"1000\" has no unit"},
		{head + "  - name: a\n    incast: {dst: h1, senders: [h2, h1], size: 1KB}\n", "f.yaml:5: a: h1 is both sender and receiver"},
		{head + "  - name: a\n    incast: {dst: h1, senders: [h2], fan_in: 3, size: 1KB}\n", "f.yaml:5: a: fan_in 3 but 1 senders"},
		{head + "  - name: a\n    incast: {dst: h1, fan_in: 3, size: 1KB, repeat: 3}\n", "f.yaml:5: a: repeat 3 needs every"},
		{head + "  - name: a\n    poisson: {load: 30%, stop: 1s}\n", "f.yaml:5: a: poisson needs cdf"},
		{head + "  - name: a\n    poisson: {cdf: websearch, stop: 1s}\n", "f.yaml:5: a: poisson needs load"},
		{head + "  - name: a\n    poisson:\n      cdf: websearch\n      load: 130%\n", "f.yaml:7: \"130%\" is outside"},
		{head + "  - name: a\n    poisson:\n      cdf: websearch\n      load: lots\n", "f.yaml:7: \"lots\" is not a fraction"},
		{head + "  - name: a\n    query: {fan_in: 3, size: 1KB, stop: 1s}\n", "f.yaml:5: a: query needs rate"},
		{head + "  - name: a\n    cc: \"no such\"\n    query: {rate: 1, fan_in: 3, size: 1KB, stop: 1s}\n", "f.yaml:4: congestion control \"no such\""},
		{"name: t\n  topology: [\n", "f.yaml:2:"},
		{head + "  - name: a\n    tool: netperf\n    long: {src: a, dst: b, stop: 1s}\n", "f.yaml:4: workload entry \"a\": tool \"netperf\""},
		{"name: t\ntopology: x.yaml\nworkload: []\n---\nname: u\n", "f.yaml:4: a second YAML document"},
		{"name: t\ntopology: x.yaml\nswitch:\n  queue_sample: 50us\nworkload: []\n", "f.yaml:4: queue_sample 50µs is outside"},
		{"name: t\ntopology: x.yaml\nhosts:\n  nic_queues: 300\nworkload: []\n", "f.yaml:4: hosts nic_queues 300 is outside 1..256"},
		{"name: t\ntopology: x.yaml\nhosts:\n  init_rwnd: 1KB\nworkload: []\n", "f.yaml:4: hosts init_rwnd 1KB: use 64KiB-16MiB"},
		{"name: t\ntopology: x.yaml\nswitch:\n  int: true\n  ecn: 3\n", "f.yaml:5: unknown field \"ecn\""},
		{"name: t\ntopology: x.yaml\nswitch: {ecn_threshold: 30}\n", "f.yaml:3: size \"30\" has no unit"},
		{"name: t\ntopology: x.yaml\nswitch:\n  ecn_red: {kmin: 80KB, kmax: 20KB}\n", "f.yaml:4: ecn_red: kmin 80KB is not below kmax 20KB"},
		{"name: t\ntopology: x.yaml\nswitch:\n  ecn_red: {kmin: 20KB, kmax: 20KB}\n", "f.yaml:4: ecn_red: kmin 20KB is not below kmax 20KB"},
		{"name: t\ntopology: x.yaml\nswitch:\n  ecn_red:\n    kmin: 20KB\n", "f.yaml:5: ecn_red: give kmin and kmax"},
		{"name: t\ntopology: x.yaml\nswitch:\n  ecn_red: {}\n", "f.yaml:4: ecn_red: give kmin and kmax"},
		{"name: t\ntopology: x.yaml\nswitch:\n  ecn_red:\n    pmax: 1.5\n", "f.yaml:5: \"1.5\" is outside 0-100%"},
		{"name: t\ntopology: x.yaml\nswitch:\n  ecn_red: {kmin: 1KB, kmax: 2KB, pmax: 0}\n", "f.yaml:4: ecn_red: pmax 0: the probability of marking at kmax must be above 0"},
		{"name: t\ntopology: x.yaml\nswitch:\n  ecn_red: {kmin: 2, kmax: 3KB}\n", "f.yaml:4: size \"2\" has no unit"},
		{"name: t\ntopology: x.yaml\nswitch:\n  ecn_red: {k_min: 2KB}\n", "f.yaml:4: unknown field \"k_min\""},
		{"name: t\ntopology: x.yaml\nswitch:\n  ecn_threshold: 30KB\n  ecn_red: {kmin: 1KB, kmax: 2KB}\n", "f.yaml:4: switch: ecn_threshold and ecn_red both given"},
		{"name: t\ntopology: x.yaml\nswitch:\n  ecn_threshold: 0B\n  ecn_red: {kmin: 1KB, kmax: 2KB}\n", "f.yaml:4: switch: ecn_threshold and ecn_red both given"},
		{"name: t\ntopology: x.yaml\ncompare: [cubic, bbr]\nswitch:\n  ecn_profiles:\n    reno: {ecn_threshold: 30KB}\n", "f.yaml:6: switch ecn_profiles: reno is not compared (compare: [cubic, bbr])"},
		{"name: t\ntopology: x.yaml\nswitch:\n  ecn_profiles:\n    cubic: {ecn_threshold: 30KB}\n", "f.yaml:5: switch ecn_profiles: cubic is not compared"},
		{"name: t\ntopology: x.yaml\ncompare: [cubic]\nswitch:\n  ecn_profiles:\n    cubic: {ecn_threshold: 30KB, ecn_red: {kmin: 1KB, kmax: 2KB}}\n", "f.yaml:6: switch ecn_profiles cubic: ecn_threshold and ecn_red both given"},
		{"name: t\ntopology: x.yaml\ncompare: [cubic]\nswitch:\n  ecn_profiles:\n    cubic: {}\n", "f.yaml:6: switch ecn_profiles cubic: give ecn_threshold (0B: no marking) or ecn_red, and/or qcn"},
		{"name: t\ntopology: x.yaml\nswitch:\n  int: true\n  qcn: {sample: 150KB}\n", "f.yaml:5: qcn: give qeq"},
		{"name: t\ntopology: x.yaml\nswitch:\n  tcd: {max_ton: 2ms, threshold: 75KB}\n", "f.yaml:4: tcd: the undetermined mark (U) rides in the INT option: set int: true"},
		{"name: t\ntopology: x.yaml\nswitch:\n  int: true\n  tcd: {max_ton: 2ms}\n", "f.yaml:5: tcd: give max_ton, max(T_on), and threshold"},
		{"name: t\ntopology: x.yaml\nswitch:\n  int: true\n  tcd: {max_ton: 0s, threshold: 75KB}\n", "f.yaml:5: tcd: max_ton 0s is outside 1ns..10s"},
		{"name: t\ntopology: x.yaml\nswitch:\n  int: true\n  tcd: {max_ton: 2ms, threshold: 0B}\n", "f.yaml:5: tcd: threshold must be above 0B"},
		{"name: t\ntopology: x.yaml\nswitch:\n  int: true\n  tcd: {max_ton: 2ms, threshold: 75KB, k: 1}\n", "f.yaml:5: unknown field \"k\""},
		{"name: t\ntopology: x.yaml\ncompare: [cubic]\nswitch:\n  int: true\n  ecn_profiles:\n    cubic: {tcd: {max_ton: 2ms}}\n", "f.yaml:7: unknown field \"tcd\""},
		{"name: t\ntopology: x.yaml\nswitch:\n  qcn: {qeq: 64KB}\n", "f.yaml:4: qcn: the congestion point's feedback rides in the INT option: set int: true"},
		{"name: t\ntopology: x.yaml\nswitch:\n  int: true\n  qcn: {qeq: 64KB, sample: 0B}\n", "f.yaml:5: qcn: qeq 64KB and sample 0B must be in"},
		{"name: t\ntopology: x.yaml\nswitch:\n  int: true\n  qcn: {qeq: 1GB}\n", "f.yaml:5: qcn: qeq 1GB and sample 150KB must be in"},
		{"name: t\ntopology: x.yaml\nswitch:\n  int: true\n  qcn: {qeq: 64KB, w: 2}\n", "f.yaml:5: unknown field \"w\""},
		{"name: t\ntopology: x.yaml\ncompare: [cubic]\nswitch:\n  ecn_profiles:\n    cubic: {qcn: {qeq: 64KB}}\n", "f.yaml:6: qcn: the congestion point's feedback rides in the INT option"},
		{"name: t\ntopology: x.yaml\nvariants:\n  q: {law: qcn, qcn: {qeq: 1KB}}\n", "f.yaml:4: a variant's ECN marking goes in the switch section, its QCN too"},
		{"name: t\ntopology: x.yaml\ncompare: [cubic]\nswitch:\n  ecn_profiles:\n    cubic:\n      ecn_red: {kmin: 9KB, kmax: 3KB}\n", "f.yaml:7: ecn_red: kmin 9KB is not below kmax 3KB"},
		{"name: t\ntopology: x.yaml\ncompare: [cubic]\nswitch:\n  ecn_profiles:\n    cubic: {ecn_step: 3KB}\n", "f.yaml:6: unknown field \"ecn_step\""},
		{"name: t\ntopology: x.yaml\nvariants:\n  dcqcn_x: {law: dcqcn, switch: {ecn_red: {kmin: 1KB, kmax: 2KB}}}\n", "f.yaml:4: a variant's ECN marking goes in the switch section"},
		{"name: t\ntopology: x.yaml\nvariants:\n  hpcc_x: {law: hpcc, sett: {}}\n", "f.yaml:4: unknown field \"sett\""},
		{"name: t\ntopology: x.yaml\nvariants:\n  hpcc_x: {set: {}}\n", "f.yaml:4: variant hpcc_x: no law"},
		{"name: t\ntopology: x.yaml\ncompare: [theta_powertcp]\nworkload:\n  - name: slow\n    set: {init_cwnd_bytes: 1500}\n    long: {src: h0, dst: h1, stop: 1s}\n",
			"f.yaml:5: workload entry \"slow\" sets law parameters, so its flows run as \"theta_powertcp_slow\" in the run of theta_powertcp: not a kernel congestion control name"},
		{"name: t\ntopology: x.yaml\ncc: qcn\nworkload:\n  - name: rp\n    set: {qcn.rai_kbps: 1}\n    long: {src: h0, dst: h1, stop: 1s}\n",
			"f.yaml:5: workload entry \"rp\": set \"qcn.rai_kbps\": give a parameter of the law"},
		{"name: t\ntopology: x.yaml\ncc: qcn\nvariants:\n  qcn_rp: {law: qcn}\nworkload:\n  - name: rp\n    set: {rai_kbps: 1}\n    long: {src: h0, dst: h1, stop: 1s}\n",
			"f.yaml:7: workload entry \"rp\": its flows' variant \"qcn_rp\" is already a variant of the file"},
	}
	for _, c := range cases {
		_, err := Parse("f.yaml", []byte(c.in))
		if err == nil {
			t.Errorf("accepted:\n%s", c.in)
			continue
		}
		if !at(err, c.want) {
			t.Errorf("input:\n%s\nerror %q\nwant it to contain %q", c.in, err, c.want)
		}
	}
}

// An entry's set: each run's flows of that entry run as a variant of the
// run's law (or of the variant it compares) with the entry's parameters
// on top; the other entries keep the run's law.
func TestParseEntrySet(t *testing.T) {
	src := `name: t
topology: x.yaml
compare: [qcn, qcn_fast]
variants:
  qcn_fast: {law: qcn, set: {rai_kbps: 5000}}
workload:
  - name: rp1
    set: {init_rate_kbps: 900000}
    long: {src: h1, dst: h0, stop: 1s}
  - name: rp2
    long: {src: h2, dst: h0, stop: 1s}
  - name: rp3
    cc: qcn_t
    set: {init_rate_kbps: 100000}
    long: {src: h3, dst: h0, stop: 1s}
`
	e, err := Parse("f.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ entry, cc, want string }{
		{"rp1", "qcn", "qcn_rp1"}, {"rp1", "qcn_fast", "qcn_fast_rp1"},
		{"rp2", "qcn", "qcn"}, {"rp2", "qcn_fast", "qcn_fast"},
		{"rp3", "qcn", "qcn_t_rp3"}, {"rp3", "qcn_fast", "qcn_t_rp3"},
	} {
		i := slices.IndexFunc(e.Workload, func(en Entry) bool { return en.Name == c.entry })
		if got := e.EntryCC(&e.Workload[i], c.cc); got != c.want {
			t.Errorf("entry %s in the run of %s: %s, want %s", c.entry, c.cc, got, c.want)
		}
	}
	want := map[string]VariantSpec{
		"qcn_fast":     {Law: "qcn", Set: map[string]string{"rai_kbps": "5000"}},
		"qcn_rp1":      {Law: "qcn", Set: map[string]string{"init_rate_kbps": "900000"}, Entry: "rp1"},
		"qcn_fast_rp1": {Law: "qcn", Set: map[string]string{"rai_kbps": "5000", "init_rate_kbps": "900000"}, Entry: "rp1"},
		"qcn_t_rp3":    {Law: "qcn_t", Set: map[string]string{"init_rate_kbps": "100000"}, Entry: "rp3"},
	}
	if len(e.Variants) != len(want) {
		t.Errorf("variants %v, want %v", e.Variants, want)
	}
	for name, w := range want {
		got, ok := e.Variants[name]
		if !ok || got.Law != w.Law || got.Entry != w.Entry || !maps.Equal(got.Set, w.Set) {
			t.Errorf("variant %s: %+v, want %+v", name, got, w)
		}
	}
	if got := e.VariantSettings("qcn_fast_rp1").Strings(); !slices.Equal(got, []string{"qcn.init_rate_kbps=900000", "qcn.rai_kbps=5000"}) {
		t.Errorf("qcn_fast_rp1 registers with %v", got)
	}
}

// at reports whether one of err's lines is want ("f.yaml:5: msg...") with
// a column after the line: "f.yaml:5:<column>: msg...".
func at(err error, want string) bool {
	m := regexp.MustCompile(`^([^:]*):(\d+): `).FindStringSubmatch(want)
	if m == nil {
		return strings.Contains(err.Error(), want)
	}
	re := regexp.MustCompile(`^` + regexp.QuoteMeta(m[1]+":"+m[2]+":") + `\d+: ` + regexp.QuoteMeta(want[len(m[0]):]))
	for _, l := range strings.Split(err.Error(), "\n") {
		if re.MatchString(l) {
			return true
		}
	}
	return false
}
