package experiment

import (
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// A PFC section is parsed and validated, its defaults filled (Xon two
// frames below Xoff, HPCC's alpha, headroom auto), and then the run is
// refused with the controller's absence, never run lossy instead.
func TestParsePFC(t *testing.T) {
	for _, c := range []struct {
		in   string
		want PFC
	}{
		{"{mode: static, xoff: 30KB}", PFC{Mode: PFCStatic, Xoff: 30000, Xon: 30000 - 3028, Headroom: Headroom{Auto: true}}},
		{"{mode: static, xoff: 30KB, xon: 20KB, headroom: 28028B}", PFC{Mode: PFCStatic, Xoff: 30000, Xon: 20000, Headroom: Headroom{Bytes: 28028}}},
		{"{mode: dynamic}", PFC{Mode: PFCDynamic, Alpha: 0.11, Hysteresis: 3028, Headroom: Headroom{Auto: true}}},
		{"{mode: dynamic, alpha: 20%, hysteresis: 6KB, headroom: auto}", PFC{Mode: PFCDynamic, Alpha: 0.2, Hysteresis: 6000, Headroom: Headroom{Auto: true}}},
	} {
		var f PFC
		if err := yaml.Unmarshal([]byte(c.in), &f); err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		var p problems
		f.validate(&p)
		if len(p.list) != 1 || !strings.Contains(p.list[0].msg, "PFC controller is not built yet") {
			t.Errorf("%s: problems %+v, want only the controller's absence", c.in, p.list)
		}
		f.Line, f.set = 0, nil
		if !reflect.DeepEqual(f, c.want) {
			t.Errorf("%s: %+v, want %+v", c.in, f, c.want)
		}
		src := "name: t\ntopology: x.yaml\nswitch:\n  pfc: " + c.in + "\n" + pfcWorkload
		if _, err := Parse("f.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), "f.yaml:4:3: switch pfc: the PFC controller is not built yet") || strings.Count(err.Error(), "\n") != 0 {
			t.Errorf("%s: Parse: %v, want the run refused", c.in, err)
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
		{"{mode: dynamic, alpha: 0}", "alpha must be above 0"},
		{"{mode: dynamic, headroom: 0B}", "headroom 0B"},
		{"{mode: dynamic, headroom: lots}", `headroom "lots": give auto or a size`},
		{"{mode: dynamic, watchdog: 1s}", "watchdog"},
	} {
		src := "name: t\ntopology: x.yaml\nswitch:\n  pfc: " + c.in + "\n" + pfcWorkload
		_, err := Parse("f.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.in, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "not built yet") {
			t.Errorf("%s: a bad section also says the controller is missing: %v", c.in, err)
		}
	}
}
