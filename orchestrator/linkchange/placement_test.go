package linkchange_test

import (
	"strings"
	"testing"

	"cclab/orchestrator/linkchange"
	"cclab/topology"
)

// A delay change on one leaf-spine link makes the ECMP paths between the
// leaves differ in delay: refused under path placement (the line holds a
// path's delay in one place), accepted under link placement.
func TestDelayChangeUnequalECMP(t *testing.T) {
	for _, placement := range []string{topology.PlacePath, topology.PlaceLink} {
		plan, err := topology.Parse("ls.yaml", []byte("name: ls\nkind: leafspine\nleafspine: {leaves: 2, spines: 2, hosts_per_leaf: 2}\n"+
			"links:\n  default: {rate: 100Mbit, buffer: 64KB, delay: 500us}\ndelay: {placement: "+placement+"}\n"))
		if err != nil {
			t.Fatal(err)
		}
		next, err := linkchange.CheckOn(plan, linkchange.Request{Target: "l0:s0", Delay: "2ms"})
		if placement == topology.PlacePath {
			if err == nil || !strings.Contains(err.Error(), "differ in delay") {
				t.Errorf("path placement: %v, want the change refused", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("link placement: %v", err)
		}
		if next.DelayPlacement != topology.PlaceLink {
			t.Errorf("the changed plan's placement is %q", next.DelayPlacement)
		}
	}
}
