package cpustat

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// ThreadPin is this process's threads moved onto a set of CPUs; Undo puts
// each back as it was (threads born meanwhile get the process's CPUs from
// before the move).
type ThreadPin struct {
	before map[int]unix.CPUSet // the threads moved, and their CPUs before
	own    map[int]bool        // threads on one CPU of their own, left alone
	all    unix.CPUSet         // the process's CPUs, for threads born since
}

// PinThreads moves every thread of this process that may run on more than
// one CPU onto cpus. A thread pinned to one CPU already (the delay line's)
// stays where it is. New threads inherit the affinity of the thread that
// makes them, so the Go runtime's later threads follow.
func PinThreads(cpus []int) (*ThreadPin, error) {
	var to unix.CPUSet
	for _, c := range cpus {
		to.Set(c)
	}
	if to.Count() == 0 {
		return nil, errors.New("pin threads: no CPU")
	}
	p := &ThreadPin{before: map[int]unix.CPUSet{}, own: map[int]bool{}}
	for _, c := range AllowedOrAll() {
		p.all.Set(c)
	}
	tids, err := threads()
	if err != nil {
		return nil, err
	}
	for _, tid := range tids {
		var cur unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &cur); err != nil {
			continue // gone
		}
		if cur.Count() <= 1 {
			p.own[tid] = true
			continue
		}
		if err := unix.SchedSetaffinity(tid, &to); err != nil {
			if errors.Is(err, unix.ESRCH) {
				continue
			}
			_ = p.Undo()
			return nil, fmt.Errorf("pin thread %d: %w", tid, err)
		}
		p.before[tid] = cur
	}
	return p, nil
}

// Undo gives every thread it moved its CPUs back, and threads born since
// the process's CPUs.
func (p *ThreadPin) Undo() error {
	tids, err := threads()
	if err != nil {
		return err
	}
	var errs []error
	for _, tid := range tids {
		if p.own[tid] {
			continue
		}
		set, moved := p.before[tid]
		if !moved {
			set = p.all
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("unpin thread %d: %w", tid, err))
		}
	}
	return errors.Join(errs...)
}

// threads lists this process's thread ids.
func threads() ([]int, error) {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, fmt.Errorf("list threads: %w", err)
	}
	var tids []int
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}
