package cleanup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"cclab/internal/runid"

	"golang.org/x/sys/unix"
)

// NetnsDir is where named network namespaces are bind-mounted (as by
// `ip netns`).
const NetnsDir = "/run/netns"

// Report says what Clean removed.
type Report struct {
	ID         runid.ID `json:"id"`
	Namespaces []string `json:"namespaces"`
	Killed     []int    `json:"killed_pids"`
	BPFDir     string   `json:"bpf_dir,omitempty"`
	StateDir   string   `json:"state_dir,omitempty"`
	Cgroups    []string `json:"cgroups,omitempty"`
}

// Empty reports whether nothing was found.
func (r Report) Empty() bool {
	return len(r.Namespaces) == 0 && len(r.Killed) == 0 && r.BPFDir == "" && r.StateDir == "" && len(r.Cgroups) == 0
}

// Namespaces lists the namespaces of run id, sorted.
func Namespaces(id runid.ID) ([]string, error) {
	ents, err := os.ReadDir(NetnsDir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	var out []string
	for _, e := range ents {
		if rid, _, ok := runid.FromNetns(e.Name()); ok && rid == id {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// Clean removes everything run id left: it kills the processes the run
// recorded and every process whose network namespace is one of the run's,
// waits for them to die, then deletes the namespaces (their interfaces go
// with them), the BPF pin directory and the state directory.
func Clean(ctx context.Context, id runid.ID) (Report, error) {
	rep := Report{ID: id}
	names, err := Namespaces(id)
	if err != nil {
		return rep, err
	}
	inodes := map[uint64]bool{}
	for _, n := range names {
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join(NetnsDir, n), &st); err == nil {
			inodes[st.Ino] = true
		}
	}
	victims, err := recordedPIDs(id)
	if err != nil {
		return rep, fmt.Errorf("read pids of run %s: %w", id, err)
	}
	victims = append(victims, pidsInNetns(inodes)...)
	rep.Killed = kill(ctx, victims)

	var errs []error
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for _, n := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func(n string) {
			defer wg.Done()
			defer func() { <-sem }()
			err := DeleteNetns(n)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			} else {
				rep.Namespaces = append(rep.Namespaces, n)
			}
		}(n)
	}
	wg.Wait()
	sort.Strings(rep.Namespaces)

	if _, err := os.Stat(id.BPFDir()); err == nil {
		if err := os.RemoveAll(id.BPFDir()); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", id.BPFDir(), err))
		} else {
			rep.BPFDir = id.BPFDir()
		}
	}
	if _, err := os.Stat(id.StateDir()); err == nil {
		if err := os.RemoveAll(id.StateDir()); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", id.StateDir(), err))
		} else {
			rep.StateDir = id.StateDir()
		}
	}
	if err := removeCgroups(id, &rep); err != nil {
		errs = append(errs, err)
	}
	return rep, errors.Join(errs...)
}

// DeleteNetns unmounts and removes a named namespace. The kernel frees it
// (and its veths, whose peers vanish too) once no process or mount holds it.
func DeleteNetns(name string) error {
	p := filepath.Join(NetnsDir, name)
	if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmount netns %s: %w", name, err)
	}
	if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("remove netns %s: %w", name, err)
	}
	return nil
}

// CleanAll cleans every run found: namespaces named cclab-<id>-*, state
// directories and BPF pin directories.
func CleanAll(ctx context.Context) ([]Report, error) {
	ids := map[runid.ID]bool{}
	if ents, err := os.ReadDir(NetnsDir); err == nil {
		for _, e := range ents {
			if id, _, ok := runid.FromNetns(e.Name()); ok {
				ids[id] = true
			}
		}
	}
	for _, id := range cgroupRunIDs() {
		ids[id] = true
	}
	if ents, err := os.ReadDir(runid.StateRoot); err == nil {
		for _, e := range ents {
			if id, err := runid.Parse(e.Name()); err == nil && e.IsDir() {
				ids[id] = true
			}
		}
	}
	if ents, err := os.ReadDir(runid.BPFRoot); err == nil {
		for _, e := range ents {
			if rest, ok := strings.CutPrefix(e.Name(), runid.Mark); ok && e.IsDir() {
				// cclab-cc holds the registered laws and the shared INT echo
				// map (tcopt/int_echo.h), not a run: `cclab cc unload` owns it.
				if rest == "cc" {
					continue
				}
				if id, err := runid.Parse(rest); err == nil {
					ids[id] = true
				}
			}
		}
	}
	var sorted []string
	for id := range ids {
		sorted = append(sorted, string(id))
	}
	sort.Strings(sorted)
	var reps []Report
	var errs []error
	for _, s := range sorted {
		if err := ctx.Err(); err != nil {
			return reps, err
		}
		rep, err := Clean(ctx, runid.ID(s))
		reps = append(reps, rep)
		if err != nil {
			errs = append(errs, fmt.Errorf("run %s: %w", s, err))
		}
	}
	return reps, errors.Join(errs...)
}

// pidsInNetns returns processes whose network namespace (that of their
// main thread, /proc/PID/ns/net) has one of the given inodes.
func pidsInNetns(inodes map[uint64]bool) []int {
	if len(inodes) == 0 {
		return nil
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		var st unix.Stat_t
		if unix.Stat("/proc/"+e.Name()+"/ns/net", &st) != nil {
			continue
		}
		if inodes[st.Ino] {
			out = append(out, pid)
		}
	}
	return out
}

// kill sends SIGKILL to each pid (never ourselves) and waits until each is
// gone or a zombie, at most 5 s.
func kill(ctx context.Context, pids []int) []int {
	seen := map[int]bool{}
	var killed []int
	for _, pid := range pids {
		if seen[pid] || pid == os.Getpid() || pid <= 1 {
			continue
		}
		seen[pid] = true
		if err := syscall.Kill(pid, syscall.SIGKILL); err == nil {
			killed = append(killed, pid)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range killed {
		for alive(pid) && time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(2 * time.Millisecond)
		}
	}
	sort.Ints(killed)
	return killed
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	f, err := statFields(pid)
	if err != nil || len(f) == 0 {
		return false
	}
	return f[0] != "Z" && f[0] != "X"
}

// RunsWithNamespaces lists the runs that have namespaces, sorted.
func RunsWithNamespaces() ([]runid.ID, error) {
	ents, err := os.ReadDir(NetnsDir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	seen := map[runid.ID]bool{}
	var out []runid.ID
	for _, e := range ents {
		if id, _, ok := runid.FromNetns(e.Name()); ok && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}
