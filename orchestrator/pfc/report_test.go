package pfc

import (
	"testing"
)

// The controller's bookkeeping, without a network: a resume closes the
// pause's time; the lateness summary's percentiles. (The timing thread's
// heap and early issue are C, ctl.c, and run in the controller's real
// runs.)
func TestControllerBookkeeping(t *testing.T) {
	p := portState{paused: true, since: 1000}
	p.resumed(4000)
	p.paused, p.since = true, 5000
	p.resumed(5500)
	if p.paused || p.pausedNs != 3500 || p.longestNs != 3000 || p.lastXonNs != 5500 {
		t.Errorf("after two pauses: %+v", p)
	}

	ns := make([]int64, 200)
	for i := range ns {
		ns[i] = int64(200 - i) // 1..200, unsorted
	}
	if l := summarise(ns); l.N != 200 || l.P50Ns != 100 || l.P99Ns != 198 || l.MaxNs != 200 {
		t.Errorf("summary of 1..200: %+v", l)
	}
	if l := summarise(nil); l != (Lateness{}) {
		t.Errorf("summary of nothing: %+v", l)
	}
}
