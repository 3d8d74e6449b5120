package experiment

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// A PFC section is parsed and validated, its defaults filled (Xon two
// frames below Xoff, HPCC's alpha, headroom auto), and the hosts' with it
// (one NIC FIFO, rto_min DefaultLosslessRTOMin).
func TestParsePFC(t *testing.T) {
	for _, c := range []struct {
		in   string
		want PFC
	}{
		{"{mode: static, xoff: 30KB}", PFC{Mode: PFCStatic, Xoff: 30000, Xon: 30000 - 3028, Headroom: Headroom{Auto: true}}},
		{"{mode: static, xoff: 30KB, xon: 20KB, headroom: 28028B}", PFC{Mode: PFCStatic, Xoff: 30000, Xon: 20000, Headroom: Headroom{Bytes: 28028}}},
		{"{mode: static, xoff: 30KB, buffer: 2MB}", PFC{Mode: PFCStatic, Xoff: 30000, Xon: 30000 - 3028, Headroom: Headroom{Auto: true}, Buffer: 2e6}},
		{"{mode: dynamic, buffer: 32MB}", PFC{Mode: PFCDynamic, Alpha: 0.11, Hysteresis: 3028, Headroom: Headroom{Auto: true}, Buffer: 32e6}},
		{"{mode: dynamic, alpha: 20%, hysteresis: 6KB, headroom: auto, buffer: 1MB}", PFC{Mode: PFCDynamic, Alpha: 0.2, Hysteresis: 6000, Headroom: Headroom{Auto: true}, Buffer: 1e6}},
	} {
		var f PFC
		if err := yaml.Unmarshal([]byte(c.in), &f); err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		var p problems
		f.validate(&p)
		if len(p.list) != 0 {
			t.Errorf("%s: problems %+v", c.in, p.list)
		}
		f.Line, f.set = 0, nil
		if !reflect.DeepEqual(f, c.want) {
			t.Errorf("%s: %+v, want %+v", c.in, f, c.want)
		}
		src := "name: t\ntopology: x.yaml\nswitch:\n  pfc: " + c.in + "\n" + pfcWorkload
		e, err := Parse("f.yaml", []byte(src))
		if err != nil {
			t.Fatalf("%s: Parse: %v", c.in, err)
		}
		if e.Hosts.NICQueues != 1 || e.Hosts.RTOMin.D() != DefaultLosslessRTOMin {
			t.Errorf("%s: hosts nic_queues %d, rto_min %v; want 1 and %v", c.in, e.Hosts.NICQueues, e.Hosts.RTOMin.D(), DefaultLosslessRTOMin)
		}
	}
	// Lossy hosts keep the kernel's rto_min and the NIC's queues; a file's
	// rto_min is taken on either.
	for _, c := range []struct {
		src    string
		queues int
		rto    time.Duration
	}{
		{"name: t\ntopology: x.yaml\n" + pfcWorkload, DefaultNICQueues, 0},
		{"name: t\ntopology: x.yaml\nhosts: {rto_min: 300ms}\n" + pfcWorkload, DefaultNICQueues, 300 * time.Millisecond},
		{"name: t\ntopology: x.yaml\nhosts: {rto_min: 2s, nic_queues: 1}\nswitch: {pfc: {mode: static, xoff: 30KB}}\n" + pfcWorkload, 1, 2 * time.Second},
	} {
		e, err := Parse("f.yaml", []byte(c.src))
		if err != nil {
			t.Fatalf("%q: %v", c.src, err)
		}
		if e.Hosts.NICQueues != c.queues || e.Hosts.RTOMin.D() != c.rto {
			t.Errorf("%q: nic_queues %d, rto_min %v; want %d, %v", c.src, e.Hosts.NICQueues, e.Hosts.RTOMin.D(), c.queues, c.rto)
		}
	}
}

const pfcWorkload = "workload:\n  - name: a\n    long: {src: h1, dst: h0, stop: 1s}\n"

func TestParsePFCBad(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"{xoff: 30KB}", `mode "": give static or dynamic`},
		{"{mode: lossless}", `mode "lossless": give static or dynamic`},
		{"{mode: static}", "static mode needs xoff"},
		{"{mode: static, xoff: 30KB, xon: 30KB}", "xon 30KB must be below xoff 30KB"},
		{"{mode: static, xoff: 30KB, alpha: 0.11}", "alpha and hysteresis are dynamic mode's"},
		{"{mode: dynamic, xoff: 30KB}", "xoff and xon are static mode's"},
		{"{mode: dynamic, alpha: 0, buffer: 1MB}", "alpha must be above 0"},
		{"{mode: dynamic, headroom: 0B, buffer: 1MB}", "headroom 0B"},
		{"{mode: dynamic, headroom: lots}", `headroom "lots": give auto or a size`},
		{"{mode: dynamic, watchdog: 1s}", "watchdog"},
		{"{mode: dynamic}", "dynamic mode needs buffer"},
		{"{mode: static, xoff: 30KB, buffer: 2GB}", "buffer 2GB is above the largest port buffer"},
	} {
		src := "name: t\ntopology: x.yaml\nswitch:\n  pfc: " + c.in + "\n" + pfcWorkload
		_, err := Parse("f.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.in, err, c.want)
			continue
		}
	}
	for _, c := range []struct{ hosts, want string }{
		{"{nic_queues: 4}", "hosts nic_queues 4: a lossless fabric's host port is one FIFO"},
		{"{rto_min: 100us}", "hosts rto_min 100µs: use 1ms-1m0s"},
	} {
		src := "name: t\ntopology: x.yaml\nhosts: " + c.hosts + "\nswitch:\n  pfc: {mode: static, xoff: 30KB}\n" + pfcWorkload
		if _, err := Parse("f.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("hosts %s: error %v, want %q", c.hosts, err, c.want)
		}
	}
}
