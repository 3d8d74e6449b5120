package experiment

import (
	"strings"
	"testing"
	"time"
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
	if e.Hosts.GSOMaxSize != 16384 || On(e.Hosts.TCPTimestamps, true) || !On(e.Hosts.ECN, true) {
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
		{"name: t\ntopology: x.yaml\nswitch:\n  int: true\n  ecn: 3\n", "f.yaml:5: unknown field \"ecn\""},
		{"name: t\ntopology: x.yaml\nswitch: {ecn_threshold: 30}\n", "f.yaml:3: size \"30\" has no unit"},
	}
	for _, c := range cases {
		_, err := Parse("f.yaml", []byte(c.in))
		if err == nil {
			t.Errorf("accepted:\n%s", c.in)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("input:\n%s\nerror %q\nwant it to contain %q", c.in, err, c.want)
		}
	}
}
