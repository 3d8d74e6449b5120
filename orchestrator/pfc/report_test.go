package pfc

import (
	"container/heap"
	"testing"

	"cclab/tcopt/intswitch"
)

// The controller's bookkeeping, without a network: the heap hands out
// changes by due time and, at equal times, in filing order (a port's Xoff
// before its Xon); the early issue is the median of the last 31 change
// durations, capped; a resume closes the pause's time; the lateness
// summary's percentiles.
func TestControllerBookkeeping(t *testing.T) {
	var h dueHeap
	for i, c := range []change{{due: 30}, {due: 10, kind: intswitch.PFCXoff}, {due: 20}, {due: 10, kind: intswitch.PFCXon}} {
		c.seq = uint64(i)
		heap.Push(&h, c)
	}
	var got []int64
	var kinds []intswitch.PFCKind
	for h.Len() > 0 {
		c := heap.Pop(&h).(change)
		got = append(got, c.due)
		kinds = append(kinds, c.kind)
	}
	if got[0] != 10 || got[1] != 10 || got[2] != 20 || got[3] != 30 || kinds[0] != intswitch.PFCXoff || kinds[1] != intswitch.PFCXon {
		t.Errorf("heap order %v %v", got, kinds)
	}

	var d changeDurations
	if d.median() != 0 {
		t.Errorf("median of nothing %d", d.median())
	}
	for i := int64(1); i <= 100; i++ {
		d.add(i * 1000) // the last 31: 70..100 us
	}
	if m := d.median(); m != 85_000 {
		t.Errorf("median of the last 31 of 1..100 us: %d ns, want 85000", m)
	}
	for range 31 {
		d.add(5_000_000) // a stalled RTNL
	}
	if m := d.median(); m != maxEarly {
		t.Errorf("median after stalls %d, want the cap %d", m, maxEarly)
	}

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
