package cpustat

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// Allowed is the CPUs this process may run on, by their ids: under
// Slurm or in a pod a cpuset narrows them (ids 2 and 3, not 0 and 1), so
// work pinned to a CPU or steered by mask must pick from these.
func Allowed() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("the CPUs this process may use: %w", err)
	}
	var out []int
	for c := 0; c < len(set)*64 && len(out) < set.Count(); c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// AllowedOrAll is Allowed, or 0..NumCPU-1 where the kernel will not say.
func AllowedOrAll() []int {
	if cs, err := Allowed(); err == nil && len(cs) > 0 {
		return cs
	}
	out := make([]int, runtime.NumCPU())
	for i := range out {
		out[i] = i
	}
	return out
}
