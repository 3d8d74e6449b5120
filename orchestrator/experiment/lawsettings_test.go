package experiment

import (
	"slices"
	"strings"
	"testing"

	"cclab/kmod/law"
)

const lawFile = `name: t
topology: ../topologies/star.yaml
compare: [powertcp, hpcc_x, timely]
laws:
  host_bw_mbps: 100
  powertcp.gamma_ppm: 900000
variants:
  hpcc_x:
    law: hpcc
    set:
      eta_ppm: 950000
workload:
  - name: long
    long: {src: h0, dst: h1, stop: 2s}
  - name: slow
    set: {max_cwnd_bytes: 100000}
    long: {src: h2, dst: h1, stop: 2s}
`

// The laws section, the variants' set and the entries' set are parsed
// once into typed settings: the generic ones first, then the law's own.
func TestLawSettingsTyped(t *testing.T) {
	e, err := Parse("experiments/t.yaml", []byte(lawFile))
	if err != nil {
		t.Fatal(err)
	}
	want := law.Settings{{Param: "host_bw_mbps", Value: 100}, {Law: law.PowerTCP, Param: "gamma_ppm", Value: 900000}}
	if !slices.Equal(e.LawSet, want) {
		t.Errorf("laws %+v, want %+v", e.LawSet, want)
	}
	if got := e.Variants["hpcc_x"].Settings; !slices.Equal(got, law.Settings{{Law: law.HPCC, Param: "eta_ppm", Value: 950000}}) {
		t.Errorf("hpcc_x's own settings %+v", got)
	}
	if got := strings.Join(e.VariantSettings("timely_slow").Strings(), " "); got != "host_bw_mbps=100 timely.max_cwnd_bytes=100000" {
		t.Errorf("timely_slow registers with %s", got)
	}
}

// Every bad setting of a file is reported in one pass, at file:line:column
// of the setting itself; relations between parameters (TIMELY's T_low
// below T_high) are checked in user space as the law's own check does.
func TestLawSettingsErrors(t *testing.T) {
	bad := strings.NewReplacer(
		"  host_bw_mbps: 100", "  host_bw_mbps: 0\n  warp_factor: 9\n  timely.t_low_ns: 600000",
		"eta_ppm: 950000", "eta_ppm: 0.95",
		"max_cwnd_bytes: 100000", "init_rate: 1",
	).Replace(lawFile)
	_, err := Parse("experiments/t.yaml", []byte(bad))
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{
		"experiments/t.yaml:5: laws: powertcp host_bw_mbps=0 Mbit/s: outside its range",
		`experiments/t.yaml:6: laws: parameter "warp_factor": no law has it`,
		"experiments/t.yaml:7: laws: timely parameters: t_low_ns must be below t_high_ns",
		`experiments/t.yaml:13: variant hpcc_x: parameter hpcc.eta_ppm: value "0.95" is not a non-negative integer (in ppm)`,
		`experiments/t.yaml:18: workload entry "slow": set: parameter "hpcc.init_rate": hpcc has no parameter init_rate`,
	} {
		if !at(err, want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	// Once each: a variant inherits the laws section, and the entry's set
	// makes a variant of each compared law.
	// A setting for a law the file runs by no name of its own: the run
	// would register no law that takes it.
	_, err2 := Parse("experiments/t.yaml", []byte(strings.Replace(lawFile, "powertcp.gamma_ppm", "swift.hops", 1)))
	if want := "experiments/t.yaml:6: laws: swift.hops=900000: the file runs no law that has it under the law's own name (it runs powertcp, timely)"; err2 == nil || !at(err2, want) {
		t.Errorf("%v, want %q", err2, want)
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != 5 {
		t.Errorf("%d problems, want 5:\n%v", n, err)
	}
}
