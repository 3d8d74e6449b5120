package cpustat

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The steal reading covers the time since its mark, in shares of CPU time.
func TestStealSinceMark(t *testing.T) {
	m, err := MarkSteal()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	st, err := m.Since()
	if err != nil {
		t.Fatal(err)
	}
	if st.Window < 50*time.Millisecond || st.Share < 0 || st.Share > 1 || st.Worst < st.Share || st.Worst > 1 {
		t.Fatalf("steal %+v", st)
	}
}

// A CPU kept busy between two readings shows as busy time: every share is
// within 0-1 and the busy one is at least the spinning CPU's part.
func TestReadShares(t *testing.T) {
	a, perA, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(100 * time.Millisecond); time.Now().Before(end); {
	}
	b, perB, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(perA) == 0 || len(perA) != len(perB) {
		t.Fatalf("%d then %d CPUs", len(perA), len(perB))
	}
	busy, soft, steal := BusyShare(a, b), SoftirqShare(a, b), StealShare(a, b)
	for _, s := range []float64{busy, soft, steal} {
		if s < 0 || s > 1 {
			t.Fatalf("shares busy %v softirq %v steal %v, want 0-1", busy, soft, steal)
		}
	}
	if want := 0.8 / float64(len(perA)); busy < want {
		t.Errorf("busy share %.2f while one of %d CPUs spun, want >= %.2f", busy, len(perA), want)
	}
	if BusyShare(b, a) != 0 {
		t.Error("a reading against a later one is not 0")
	}
}

// The allowed CPUs follow the process's affinity: narrowed to one CPU
// (as a cpuset would), Allowed names exactly that CPU's id.
func TestAllowedFollowsAffinity(t *testing.T) {
	all, err := Allowed()
	if err != nil || len(all) == 0 {
		t.Fatalf("allowed: %v %v", all, err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		t.Fatal(err)
	}
	defer unix.SchedSetaffinity(0, &old)
	last := all[len(all)-1]
	var one unix.CPUSet
	one.Set(last)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		t.Fatal(err)
	}
	if got, err := Allowed(); err != nil || len(got) != 1 || got[0] != last {
		t.Errorf("narrowed to CPU %d: %v %v", last, got, err)
	}
}
