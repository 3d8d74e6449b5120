package live

import (
	"strings"
	"testing"
)

// topo up --cc LAW name=value: the settings are typed and checked against
// the law table before anything is built, in user space.
func TestCheckLawSettings(t *testing.T) {
	if err := CheckLaw("hpcc", []string{"eta_ppm=900000", "hpcc.max_stage=4"}); err != nil {
		t.Errorf("good hpcc settings refused: %v", err)
	}
	for _, c := range []struct {
		law      string
		settings []string
		want     string
	}{
		{"powertcp", []string{"gamma_ppm=2000000"}, "--cc powertcp: powertcp gamma_ppm=2000000 ppm: outside its range"},
		{"powertcp", []string{"hpcc.eta_ppm=900000"}, "law hpcc is not among powertcp"},
		{"timely", []string{"t_low_ns=600000"}, "t_low_ns must be below t_high_ns"},
		{"hpcc", []string{"eta_ppm"}, "want param=value"},
		{"cubic", []string{"eta_ppm=1"}, "are for cclab's laws"},
	} {
		if err := CheckLaw(c.law, c.settings); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--cc %s %v: %v, want an error saying %q", c.law, c.settings, err, c.want)
		}
	}
}
