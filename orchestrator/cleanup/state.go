// Package cleanup finds and removes what a cclab run left behind: its
// network namespaces, its pinned BPF objects, its state directory and the
// processes it started or that live in its namespaces. It matches by the
// run's naming (internal/runid) and by namespace identity, never by process
// name.
package cleanup

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"cclab/internal/runid"
)

// PIDFile lists, one per line, "pid starttime" of every process a run
// started; the start time (clock ticks since boot, /proc/PID/stat field 22)
// guards against killing an unrelated process that reused the pid.
const PIDFile = "pids"

// PlanFile is the expanded topology the run built.
const PlanFile = "plan.json"

// EnsureStateDir creates the run's state directory.
func EnsureStateDir(id runid.ID) error {
	if err := os.MkdirAll(id.StateDir(), 0o755); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	return nil
}

// WriteJSON stores v as name in the run's state directory.
func WriteJSON(id runid.ID, name string, v any) error {
	if err := EnsureStateDir(id); err != nil {
		return err
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	tmp := filepath.Join(id.StateDir(), "."+name+".tmp")
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return os.Rename(tmp, filepath.Join(id.StateDir(), name))
}

// RecordPID notes that the run started process pid, so that Clean kills it.
// Safe to call from several processes at once (one O_APPEND write each).
func RecordPID(id runid.ID, pid int) error {
	st, err := startTime(pid)
	if err != nil {
		return fmt.Errorf("record pid %d: %w", pid, err)
	}
	if err := EnsureStateDir(id); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(id.StateDir(), PIDFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("record pid %d: %w", pid, err)
	}
	if _, err := fmt.Fprintf(f, "%d %d\n", pid, st); err != nil {
		f.Close()
		return fmt.Errorf("record pid %d: %w", pid, err)
	}
	return f.Close()
}

// recordedPIDs returns the pids a run recorded that still run the same
// process (same start time).
func recordedPIDs(id runid.ID) ([]int, error) {
	f, err := os.Open(filepath.Join(id.StateDir(), PIDFile))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 {
			continue
		}
		pid, err1 := strconv.Atoi(fields[0])
		st, err2 := strconv.ParseUint(fields[1], 10, 64)
		if err1 != nil || err2 != nil || pid <= 0 {
			continue
		}
		if now, err := startTime(pid); err == nil && now == st {
			out = append(out, pid)
		}
	}
	return out, sc.Err()
}

// startTime reads field 22 of /proc/PID/stat (after the parenthesised
// command name, which may itself hold spaces).
func startTime(pid int) (uint64, error) {
	fields, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	// fields[0] is the state (field 3); starttime is field 22.
	if len(fields) < 20 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	return strconv.ParseUint(fields[19], 10, 64)
}

// statFields returns /proc/PID/stat from field 3 (state) on.
func statFields(pid int) ([]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, fmt.Errorf("bad /proc/%d/stat", pid)
	}
	return strings.Fields(s[i+1:]), nil
}

// RunsWithState lists the runs that have a state directory, in name order.
func RunsWithState() ([]runid.ID, error) {
	ents, err := os.ReadDir(runid.StateRoot)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	var out []runid.ID
	for _, e := range ents {
		if id, err := runid.Parse(e.Name()); err == nil && e.IsDir() {
			out = append(out, id)
		}
	}
	return out, nil
}
