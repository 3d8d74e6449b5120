package cpustat

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// affinity of thread tid, as a list of CPUs.
func affinity(t *testing.T, tid int) []int {
	t.Helper()
	var s unix.CPUSet
	if err := unix.SchedGetaffinity(tid, &s); err != nil {
		t.Fatal(err)
	}
	var out []int
	for c := 0; c < 1024; c++ {
		if s.IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}

// lockedThread runs a thread of its own until stop closes, reporting its
// tid; with cpu >= 0 it first pins itself there.
func lockedThread(t *testing.T, cpu int, stop chan struct{}) int {
	t.Helper()
	tid := make(chan int)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if cpu >= 0 {
			var s unix.CPUSet
			s.Set(cpu)
			if err := unix.SchedSetaffinity(0, &s); err != nil {
				t.Error(err)
			}
		}
		tid <- unix.Gettid()
		<-stop
	}()
	return <-tid
}

// Every thread that could run anywhere moves onto the pin's CPU, a thread
// pinned to a CPU of its own (the delay line's) stays, threads born during
// the pin are on its CPU, and Undo gives all of them back their CPUs.
func TestPinThreads(t *testing.T) {
	cpus := AllowedOrAll()
	if len(cpus) < 2 {
		t.Skip("needs two CPUs")
	}
	target, own := cpus[len(cpus)-1], cpus[0]
	stop := make(chan struct{})
	defer close(stop)
	ownTid := lockedThread(t, own, stop)
	freeTid := lockedThread(t, -1, stop)
	if got := affinity(t, freeTid); len(got) != len(cpus) {
		t.Fatalf("a fresh thread runs on %v, the process on %v", got, cpus)
	}

	pin, err := PinThreads([]int{target})
	if err != nil {
		t.Fatal(err)
	}
	tids, err := threads()
	if err != nil {
		t.Fatal(err)
	}
	for _, tid := range tids {
		got := affinity(t, tid)
		want := target
		if tid == ownTid {
			want = own
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("thread %d on %v during the pin, want [%d]", tid, got, want)
		}
	}
	bornTid := lockedThread(t, -1, stop)
	if got := affinity(t, bornTid); len(got) != 1 || got[0] != target {
		t.Errorf("a thread born during the pin runs on %v", got)
	}

	if err := pin.Undo(); err != nil {
		t.Fatal(err)
	}
	for _, tid := range []int{freeTid, bornTid} {
		if got := affinity(t, tid); len(got) != len(cpus) {
			t.Errorf("thread %d on %v after Undo, want %v", tid, got, cpus)
		}
	}
	if got := affinity(t, ownTid); len(got) != 1 || got[0] != own {
		t.Errorf("the thread of its own is on %v after Undo", got)
	}
}

// Pinning to no CPU is refused.
func TestPinThreadsRefusesNone(t *testing.T) {
	if _, err := PinThreads(nil); err == nil {
		t.Fatal("PinThreads(nil) succeeded")
	}
}
