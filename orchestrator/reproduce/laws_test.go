package reproduce

import (
	"testing"

	"cclab/internal/cc"
	"cclab/kmod/law"
)

// PowerTCP and theta-PowerTCP run with the line-rate window HostBw * tau
// as their cap (max_cwnd_bytes = 0), as the paper's implementation and the
// closed-loop model (kmod/law/loop_test.go) do. theta-PowerTCP's own
// default is 16 MiB: there one RTT sample that falls faster than time
// passes (power 0, divided at the floor 0.01) multiplies the window by up
// to 100 (kmod/law TestHandThetaPowerTCPFloorSample), and in
// fairness-join-leave the windows reached megabytes against a 3.75 KB
// path and a 128 KB buffer (mean Jain 0.39-0.43).
func TestPowerLawsLineRateCap(t *testing.T) {
	seen := 0
	for _, e := range All() {
		for _, n := range e.Needs {
			if n.Law != "powertcp" && n.Law != "theta_powertcp" {
				continue
			}
			seen++
			ps, err := cc.Resolve([]string{n.Law}, n.Settings)
			if err != nil {
				t.Fatalf("%s %s: %v", e.Name, n.Name, err)
			}
			found := false
			for _, f := range ps[0].Fields {
				if f.Name != "max_cwnd_bytes" {
					continue
				}
				found = true
				if f.Value != 0 {
					t.Errorf("%s: %s registered with max_cwnd_bytes=%d, want 0 (HostBw * tau)", e.Name, n.Name, f.Value)
				}
			}
			if !found {
				t.Errorf("%s: %s has no max_cwnd_bytes parameter", e.Name, n.Name)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no experiment registers powertcp or theta_powertcp")
	}
}

// Every cclab law an experiment registers is a law of the table
// (kmod/law/law_table.h), and its settings name the table's parameters
// with values its check accepts.
func TestNeedsResolve(t *testing.T) {
	for _, e := range All() {
		for _, n := range e.Needs {
			if n.Law == "" {
				continue
			}
			if _, err := law.ParseLaw(n.Law); err != nil {
				t.Errorf("%s %s: %v", e.Name, n.Name, err)
				continue
			}
			if _, err := cc.Resolve([]string{n.Law}, n.Settings); err != nil {
				t.Errorf("%s %s: %v", e.Name, n.Name, err)
			}
		}
	}
}
