package experiment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cclab/internal/yamlerr/yamlerrtest"
)

// Every limit refuses a value beyond it with the field, the limit and the
// position (file:line:column).
func TestExperimentLimits(t *testing.T) {
	head := "name: t\ntopology: x.yaml\n"
	long := "workload:\n  - name: a\n    long: {src: h0, dst: h1, stop: 1s}\n"
	cases := []struct {
		name, in, pos string
		has           []string
	}{
		{"gso_max_size above 64KiB", head + "hosts:\n  gso_max_size: 128KiB\n" + long, "f.yaml:4:3: ",
			[]string{"hosts gso_max_size 131072B", "1500B-65536B", "64 KiB"}},
		{"gso_max_size below MTU", head + "hosts:\n  gso_max_size: 1000B\n" + long, "f.yaml:4:3: ",
			[]string{"hosts gso_max_size 1KB", "1500B-65536B"}},
		{"ecn_threshold above any buffer", head + "switch:\n  ecn_threshold: 2GB\n" + long, "f.yaml:4:3: ",
			[]string{"switch ecn_threshold 2GB", "above 1GB, the largest port buffer"}},
		{"ecn_red kmax above any buffer", head + "switch:\n  ecn_red: {kmin: 1KB, kmax: 5GB}\n" + long, "f.yaml:4:3: ",
			[]string{"ecn_red: kmax 5GB", "above 1GB"}},
		{"long count", head + "workload:\n  - name: a\n    long: {src: h0, dst: h1, count: 100000, stop: 1s}\n", "f.yaml:5:5: ",
			[]string{"a: count 100000 is above 65535", "source port"}},
		{"incast fan_in", head + "workload:\n  - name: a\n    incast: {dst: h0, fan_in: 70000, size: 1KB}\n", "f.yaml:5:5: ",
			[]string{"a: fan_in 70000 is above 65534", "address plan"}},
		{"incast flows", head + "workload:\n  - name: a\n    incast: {dst: h0, fan_in: 1000, size: 1KB, repeat: 2000, every: 1ms}\n", "f.yaml:5:5: ",
			[]string{"a: 2000000 flows (fan_in x repeat), above 1000000"}},
		{"incast negative repeat", head + "workload:\n  - name: a\n    incast: {dst: h0, fan_in: 2, size: 1KB, repeat: -1}\n", "f.yaml:5:5: ",
			[]string{"a: repeat -1 is negative"}},
		{"query flows", head + "workload:\n  - name: q\n    query: {rate: 1000000, fan_in: 10, size: 1KB, stop: 1s}\n", "f.yaml:5:5: ",
			[]string{"q: about 10000000 flows (rate x (stop - start) x fan_in), above 1000000"}},
	}
	for _, c := range cases {
		_, err := Parse("f.yaml", []byte(c.in))
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.pos) {
			t.Errorf("%s: error %q is not at %q", c.name, err, c.pos)
		}
		for _, h := range c.has {
			if !strings.Contains(err.Error(), h) {
				t.Errorf("%s: error %q does not say %q", c.name, err, h)
			}
		}
	}
	if _, err := Parse("f.yaml", []byte(head+"hosts:\n  gso_max_size: 64KiB\nswitch:\n  ecn_threshold: 1GB\n"+long)); err != nil {
		t.Errorf("refused at the limits: %v", err)
	}
}

// Every error of a file at once, sorted by position: bad values together
// (yaml.v3's type errors, units, fractions, unknown keys), then, in a file
// whose values decode, every failed check.
func TestEveryExperimentErrorAtOnce(t *testing.T) {
	bad := `name: t
topology: x.yaml
timeout: 5
hosts: {ecn: maybe, jumbo: true}
workload:
  - name: a
    poisson: {cdf: websearch, load: 130%, stop: 1s}
`
	_, err := Parse("f.yaml", []byte(bad))
	want := []string{
		`f.yaml:3:10: duration "5"`,
		`f.yaml:4:14: cannot unmarshal !!str ` + "`maybe`",
		`f.yaml:4:21: unknown field "jumbo"`,
		`f.yaml:7:37: "130%" is outside 0-100%`,
	}
	yamlerrtest.Lines(t, err, want)

	checks := `name: t
topology: x.yaml
compare: [cubic, cubic]
hosts: {nic_queues: 1000}
workload:
  - name: a
    long: {src: h0, dst: h0, stop: 1s}
  - name: b
    incast: {dst: h1, senders: [h1], size: 1KB}
  - name: a
    query: {rate: 0, fan_in: 2, size: 1KB, stop: 1s}
`
	_, err = Parse("f.yaml", []byte(checks))
	want = []string{
		`f.yaml:1:1: compare lists cubic twice`,
		`f.yaml:4:1: hosts nic_queues 1000 is outside 1..256`,
		`f.yaml:7:5: a: src and dst are both h0`,
		`f.yaml:9:5: b: h1 is both sender and receiver`,
		`f.yaml:10:5: workload entry "a" already defined at line 6`,
		`f.yaml:11:5: a: query needs rate > 0`,
	}
	yamlerrtest.Lines(t, err, want)
}

// A syntax error names the culprit's line (yaml.v3 prints a parser
// error's 0-based line).
func TestExperimentSyntaxLine(t *testing.T) {
	_, err := Parse("f.yaml", []byte("name: t\ntopology: x.yaml\ncompare: [cubic, bbr\nworkload: []\n"))
	if err == nil || err.Error() != "f.yaml:3: did not find expected ',' or ']'" {
		t.Errorf("error %v, want it at line 3, where the list opens", err)
	}
}

// A topology that does not exist is named as missing, at the line and
// column where the experiment names it, not at line 1; one that exists
// but is wrong keeps its own file and lines under that reference.
func TestMissingTopologyNamed(t *testing.T) {
	dir := t.TempDir()
	exp := filepath.Join(dir, "e.yaml")
	src := "# an experiment\nname: t\nseed: 3\ntopology: ../nowhere/t.yaml\nworkload:\n  - name: a\n    long: {src: h0, dst: h1, stop: 1s}\n"
	e, err := Parse(exp, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.LoadTopology()
	want := exp + ":4:1: topology ../nowhere/t.yaml: no such file (looked for " + filepath.Join(dir, "../nowhere/t.yaml")
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error %v, want it to start %q", err, want)
	}
	if err := os.WriteFile(filepath.Join(dir, "t.yaml"), []byte("name: t\nkind: line\nline: {switches: 0}\nlinks:\n  default: {rate: 10Tbit, buffer: 64KB}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err = Parse(exp, []byte(strings.Replace(src, "../nowhere/t.yaml", "t.yaml", 1)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.LoadTopology()
	topo := filepath.Join(dir, "t.yaml")
	yamlerrtest.Lines(t, err, []string{exp + ":4:1: topology t.yaml:", topo + ":3:8: line.switches = 0", topo + ":5:13: links.default.rate 10000Gbit is above 20Gbit"})
}
