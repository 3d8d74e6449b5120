package topology

import (
	"errors"
	"strings"
	"testing"

	"cclab/internal/yamlerr"
	"cclab/internal/yamlerr/yamlerrtest"
)

// Every physical limit refuses a value beyond it with the field, the
// limit and the position of the value.
func TestPhysicalLimits(t *testing.T) {
	line := func(links string) string {
		return "name: x\nkind: line\nline: {switches: 2}\nlinks:\n" + links
	}
	cases := []struct {
		name, yml string
		pos       string   // file:line:column of the error
		has       []string // the field, the limit and the reason
	}{
		{"rate 10Tbit", line("  default:\n    rate: 10Tbit\n    buffer: 64KB\n"), "t.yaml:6:5: ",
			[]string{"links.default.rate 10000Gbit", "above 20Gbit", "veth"}},
		{"rate just above", line("  default: {rate: 21Gbit, buffer: 64KB}\n"), "t.yaml:5:13: ",
			[]string{"links.default.rate 21Gbit", "above 20Gbit"}},
		{"rate below 1Mbit", line("  default: {rate: 500Kbit, buffer: 64KB}\n"), "t.yaml:5:13: ",
			[]string{"links.default.rate 500Kbit", "below 1Mbit"}},
		{"buffer 100GB", line("  default:\n    rate: 1Gbit\n    buffer: 100GB\n"), "t.yaml:7:5: ",
			[]string{"links.default.buffer 100GB", "above 1GB per port", "32 bits"}},
		{"host_buffer 2GB", "name: x\nkind: star\nstar: {senders: 2}\nlinks:\n  default: {rate: 1Gbit, buffer: 64KB}\n  host: {rate: 1Gbit, buffer: 64KB, host_buffer: 2GB}\n", "t.yaml:6:37: ",
			[]string{"links.host.host_buffer 2GB", "above 1GB per port"}},
		{"delay 10s", line("  default:\n    rate: 100Mbit\n    buffer: 64KB\n    delay: 10s\n"), "t.yaml:8:5: ",
			[]string{"links.default.delay 10s", "RTT of at least 20s", "not below 1s", "retransmission timeout"}},
		{"delay 10s before any plan", "name: x\nkind: fattree\nfattree: {k: 0}\nlinks:\n  default: {rate: 100Mbit, buffer: 64KB, delay: 10s}\n", "t.yaml:3:11: ",
			[]string{"fattree.k = 0", "\nt.yaml:5:42: links.default.delay 10s: a path over it has a propagation RTT of at least 20s"}},
		{"path over several links", line("  host: {rate: 100Mbit, buffer: 64KB, delay: 300ms}\n  switch: {rate: 100Mbit, buffer: 64KB, delay: 300ms}\n"), "t.yaml:5:39: ",
			[]string{"links.host.delay 300ms", "the longest path's propagation RTT is 1.8s", "not below 1s"}},
		{"delay line memory", "name: x\nkind: star\nstar: {senders: 200}\nlinks:\n  default: {rate: 20Gbit, buffer: 64KB, delay: 200ms}\n", "t.yaml:5:41: ",
			[]string{"links.default.delay 200ms", "the delay line would allocate", "more than the 8 GB"}},
		{"oversubscription derives a rate too fast", "name: x\nkind: leafspine\nleafspine: {leaves: 2, spines: 1, hosts_per_leaf: 4, oversubscription: 0.1}\nlinks:\n  default: {rate: 10Gbit, buffer: 64KB}\n", "t.yaml:3:54: ",
			[]string{"leafspine.oversubscription 0.1", "400Gbit", "outside 1Mbit..20Gbit"}},
	}
	for _, c := range cases {
		_, err := Parse("t.yaml", []byte(c.yml))
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, c.pos) {
			t.Errorf("%s: error %q is not at %q", c.name, msg, c.pos)
		}
		for _, h := range c.has {
			if !strings.Contains(msg, h) {
				t.Errorf("%s: error %q does not say %q", c.name, msg, h)
			}
		}
	}
	// At the limits: accepted.
	for _, ok := range []string{
		line("  default: {rate: 20Gbit, buffer: 1GB, delay: 100ms}\n"),
		line("  default: {rate: 1Mbit, buffer: 1500B}\n"),
	} {
		if _, err := Parse("t.yaml", []byte(ok)); err != nil {
			t.Errorf("refused at the limits: %v", err)
		}
	}
}

// Counts are checked before use, and each error names the count the
// file got wrong: k: 0 is about k, not about pods.
func TestCountsNameTheirKey(t *testing.T) {
	const ok = "links:\n  default: {rate: 100Mbit, buffer: 64KB}\n"
	cases := []struct{ name, yml, want string }{
		{"k 0", "name: x\nkind: fattree\nfattree:\n  k: 0\n" + ok, "t.yaml:4:3: fattree.k = 0: k must be even and at least 2"},
		{"k negative", "name: x\nkind: fattree\nfattree: {k: -4}\n" + ok, "t.yaml:3:11: fattree.k = -4"},
		{"k 34", "name: x\nkind: fattree\nfattree: {k: 34}\n" + ok, "t.yaml:3:11: fattree.k = 34: at most 32"},
		{"empty fattree", "name: x\nkind: fattree\nfattree: {}\n" + ok, "t.yaml:3:1: fattree: give k (even, at least 2) or the explicit shape"},
		{"aggs 0 with cores", "name: x\nkind: fattree\nfattree: {pods: 2, edges_per_pod: 2, aggs_per_pod: 0, cores: 4, hosts_per_edge: 2}\n" + ok, "t.yaml:3:38: fattree.aggs_per_pod = 0: want 1..32768"},
		{"core links 0", "name: x\nkind: fattree\nfattree: {pods: 2, edges_per_pod: 2, aggs_per_pod: 2, cores: 4, hosts_per_edge: 2, core_links_per_agg: 0}\n" + ok, "t.yaml:3:84: fattree.core_links_per_agg = 0: want 1..4"},
		{"fattree too big", "name: x\nkind: fattree\nfattree: {pods: 4096, edges_per_pod: 4096, aggs_per_pod: 1, cores: 1, hosts_per_edge: 1}\n" + ok, "t.yaml:3:1: fattree: 16777216 hosts and 33558528 links, the address plan holds 65534 and 32768"},
		{"leafspine 0 spines", "name: x\nkind: leafspine\nleafspine: {leaves: 2, spines: 0, hosts_per_leaf: 2}\n" + ok, "t.yaml:3:24: leafspine.spines = 0"},
		{"leafspine too big", "name: x\nkind: leafspine\nleafspine: {leaves: 4096, spines: 4096, hosts_per_leaf: 1}\n" + ok, "t.yaml:3:1: leafspine: 16781312 links, the address plan holds 32768"},
		{"dumbbell 0", "name: x\nkind: dumbbell\ndumbbell: {hosts_per_side: 0}\n" + ok, "t.yaml:3:12: dumbbell.hosts_per_side = 0: want 1..16383"},
		{"star 0", "name: x\nkind: star\nstar: {senders: 0}\n" + ok, "t.yaml:3:8: star.senders = 0"},
	}
	for _, c := range cases {
		_, err := Parse("t.yaml", []byte(c.yml))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to start %q", c.name, err, c.want)
		}
	}
}

// Every error of a file in one pass, each at its position, sorted by
// line and column.
func TestEveryErrorAtOnce(t *testing.T) {
	yml := `name: "bad name"
kind: fattree
fattree: {k: 0}
links:
  host: {rate: 10Tbit, buffer: 100GB}
  edge_agg: {rate: 100Mbit, buffer: 1000B, delay: 1500ns}
  agg_core: {rate: 100Mbit, buffer: 64KB}
`
	_, err := Parse("t.yaml", []byte(yml))
	var ye *yamlerr.Error
	if !errors.As(err, &ye) {
		t.Fatalf("error %v is not a yamlerr.Error", err)
	}
	want := []string{
		`t.yaml:1:1: name "bad name"`,
		`t.yaml:3:11: fattree.k = 0`,
		`t.yaml:5:10: links.host.rate 10000Gbit is above 20Gbit`,
		`t.yaml:5:24: links.host.buffer 100GB is above 1GB`,
		`t.yaml:6:29: links.edge_agg.buffer 1KB is smaller than one MTU`,
		`t.yaml:6:44: links.edge_agg.delay 1.5µs`,
	}
	yamlerrtest.Lines(t, err, want)
	// Bad values of several keys (yaml.v3's type errors and the units'):
	// all of them, not the first.
	_, err = Parse("t.yaml", []byte("name: x\nkind: line\nline: {switches: many}\nlinks:\n  default: {rate: 1000, buffer: 64KB, delay: 5}\n"))
	if err == nil || strings.Count(err.Error(), "\n") != 2 ||
		!strings.Contains(err.Error(), "t.yaml:3:18: cannot unmarshal !!str `many` into int") ||
		!strings.Contains(err.Error(), "t.yaml:5:19: rate \"1000\" has no unit") ||
		!strings.Contains(err.Error(), "t.yaml:5:46: duration \"5\"") {
		t.Errorf("decode errors: %v", err)
	}
}

// yaml.v3 prints a parser error's 0-based line as if 1-based: the line
// reported here is the culprit's.
func TestSyntaxErrorLines(t *testing.T) {
	cases := []struct{ yml, want string }{
		{"name: x\nkind: line\nlinks: [1, 2\nline: 3\n", "t.yaml:3: did not find expected ',' or ']'"},
		{"name: x\nkind: line\nlinks: {a: 1\nline: 3\n", "t.yaml:3: did not find expected ',' or '}'"},
		{"name: x\nkind: line\n- line\n", "t.yaml:3: did not find expected key"},
		{"name: x\nlinks:\n  a: 3\n b: 4\n", "t.yaml:4: did not find expected key"},
		{"- a\nb: 1\n", "t.yaml:2: did not find expected '-' indicator"},
		{"name: x\nkind: @line\n", "t.yaml:2: found character that cannot start any token"},
		{"name: x\nkind: line\nlinks: *nope\n", "t.yaml:3: unknown anchor 'nope' referenced"},
		{"name: x\nkind: \"line\n", "t.yaml:2: found unexpected end of stream"},
	}
	for _, c := range cases {
		_, err := Parse("t.yaml", []byte(c.yml))
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: error %v, want %q", c.yml, err, c.want)
		}
	}
}
