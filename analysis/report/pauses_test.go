package report

import (
	"reflect"
	"strings"
	"testing"

	"cclab/rundir"
)

// Rows out of turn are left out of the timeline and named: a second pause
// of a paused port (the first one's spell is the later pause's), a resume
// of a port not paused, a pause never resumed. The clock moves by the
// offset and the origin.
func TestPausesOutOfTurn(t *testing.T) {
	row := func(line int, t int64, node, ev string) rundir.PFCChange {
		return rundir.PFCChange{Line: line, TimeNs: t, Node: node, Iface: "e", Event: ev, PeerNode: "s", PeerIface: node}
	}
	rows := []rundir.PFCChange{
		row(2, 100, "a", rundir.PFCPause),
		row(3, 150, "a", rundir.PFCPause),
		row(4, 300, "a", rundir.PFCResume),
		row(5, 400, "b", rundir.PFCResume),
		row(6, 500, "c", rundir.PFCPause),
	}
	got, warn := pausesOf(rows, 1000, 1100)
	want := []PortPauses{{Port: "a/e", By: "s/a", Pauses: []PauseSpell{{Start: 50, End: 200}}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("timeline %+v, want %+v", got, want)
	}
	joined := strings.Join(warn, "\n")
	for _, w := range []string{"pfc.csv:3: a pause of a/e, paused since line 2", "pfc.csv:5: a resume of b/e, which was not paused", "pfc.csv:6: c/e paused and never resumed"} {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings %q lack %q", joined, w)
		}
	}
	if len(warn) != 3 {
		t.Errorf("%d warnings, want 3: %q", len(warn), warn)
	}
}
