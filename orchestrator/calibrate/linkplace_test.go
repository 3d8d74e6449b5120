package calibrate_test

import (
	"fmt"
	"testing"
	"time"

	"cclab/internal/quiettest"
	"cclab/internal/testtier"
	"cclab/topology"
)

// Under link placement a leaf-spine whose ECMP paths differ in delay (one
// leaf-spine link three times as long), refused under path placement,
// builds and calibrates: each class is configured at its pair's longest
// shortest path (the flow may take it), and its loaded floor lies between
// the pair's shortest path and that, plus the fabric's and the line's
// few tens of microseconds per link.
func TestCalibrationLinkPlacementUnequalECMP(t *testing.T) {
	testtier.Kernel(t)
	const d = 400 * time.Microsecond
	plan, err := topology.Parse("ls.yaml", []byte(fmt.Sprintf(`name: ls
kind: leafspine
leafspine: {leaves: 2, spines: 2, hosts_per_leaf: 2}
links:
  default: {rate: 100Mbit, buffer: 256KB, delay: %dus}
delay: {placement: link}
`, d.Microseconds())))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range plan.Links {
		if l.Tier == "leaf_spine" {
			plan.Links[i].Delay *= 3
			break
		}
	}
	pds, err := plan.PathDelays()
	if err != nil {
		t.Fatal(err)
	}
	quiettest.Retry(t, quiettest.Policy{Failures: 2, Tries: 4}, func(int) error {
		r := calibratePlan(t, plan)
		for _, c := range r.Classes {
			for _, pd := range pds {
				if pd.Src != c.Src || pd.Dst != c.Dst {
					continue
				}
				links := int64(c.Switches + 1)
				t.Logf("%d switches (%s->%s): paths %v to %v one way, configured RTT %v, loaded floor %v",
					c.Switches, c.Src, c.Dst, pd.OneWay, pd.MaxOneWay, time.Duration(c.ConfiguredNs), time.Duration(c.FloorNs))
				if c.ConfiguredNs != 2*int64(pd.MaxOneWay) {
					t.Errorf("%d switches: configured %v, want twice %v", c.Switches, time.Duration(c.ConfiguredNs), pd.MaxOneWay)
				}
				if c.FloorNs < 2*int64(pd.OneWay) || c.FloorNs > c.ConfiguredNs+2*links*int64(40*time.Microsecond) {
					return fmt.Errorf("%d switches: loaded floor %v outside [%v, %v + 40us per link pass]", c.Switches,
						time.Duration(c.FloorNs), 2*pd.OneWay, time.Duration(c.ConfiguredNs))
				}
			}
		}
		return nil
	})
}
