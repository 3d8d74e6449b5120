package live

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"cclab/internal/runid"
	"cclab/orchestrator/cleanup"
)

// Files of the supervisor in the run's state directory.
const (
	StateFile  = "live.json" // State, written once the supervisor is ready
	LogFile    = "live.log"  // the supervisor's stderr
	SocketFile = "live.sock" // the control socket
)

// State is what live.json records of a supervisor.
type State struct {
	PID         int    `json:"pid"`
	Started     string `json:"started"` // RFC 3339
	DelayEngine string `json:"delay_engine,omitempty"`
	DelayPorts  int    `json:"delay_ports"`
	INT         bool   `json:"int"`
	SwitchPorts int    `json:"switch_ports"`
	// Agent: the host agent is attached to the run's cgroup
	// (Cgroup), so that `cclab exec` puts commands in it.
	Agent  bool   `json:"agent"`
	Cgroup string `json:"cgroup,omitempty"`
	// Law is the congestion control `topo up --cc` registered and made
	// the hosts' default, with the settings it was registered with.
	Law      string   `json:"law,omitempty"`
	Settings []string `json:"settings,omitempty"`
}

// SocketPath is where the supervisor of run id listens.
func SocketPath(id runid.ID) string { return filepath.Join(id.StateDir(), SocketFile) }

// ReadState reads live.json of run id: os.ErrNotExist when no supervisor
// was started for it (a network built by `cclab run`, or not up).
func ReadState(id runid.ID) (State, error) {
	var st State
	data, err := os.ReadFile(filepath.Join(id.StateDir(), StateFile))
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("%s of run %s: %w", StateFile, id, err)
	}
	return st, nil
}

func writeState(id runid.ID, st State) error { return cleanup.WriteJSON(id, StateFile, st) }

// Alive reports whether the supervisor of st still runs: its process
// exists and is not a zombie (killed, not yet reaped).
func (st State) Alive() bool {
	if st.PID <= 0 {
		return false
	}
	err := syscall.Kill(st.PID, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", st.PID))
	if err != nil {
		return !os.IsNotExist(err)
	}
	// "pid (comm) S ...": the state follows the last ')'.
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] != 'Z' && b[i+2] != 'X'
	}
	return true
}

// Up lists the runs that have a supervisor's state (live or dead), in
// name order.
func Up() ([]runid.ID, error) {
	ids, err := cleanup.RunsWithState()
	if err != nil {
		return nil, err
	}
	var out []runid.ID
	for _, id := range ids {
		if _, err := os.Stat(filepath.Join(id.StateDir(), StateFile)); err == nil {
			out = append(out, id)
		}
	}
	return out, nil
}

// Pick returns run id s, or the one live topology when s is empty (an
// error naming them when there are several, or none).
func Pick(s string) (runid.ID, error) {
	if s != "" {
		return runid.Parse(s)
	}
	ids, err := Up()
	if err != nil {
		return "", err
	}
	switch len(ids) {
	case 0:
		return "", errors.New("no topology is up (cclab topo up FILE brings one up)")
	case 1:
		return ids[0], nil
	}
	return "", fmt.Errorf("%d topologies are up (%v): say which with --run ID", len(ids), ids)
}

// SetLaw records in live.json the law `topo up --cc` gave the hosts.
func SetLaw(id runid.ID, law *Law) error {
	st, err := ReadState(id)
	if err != nil {
		return err
	}
	st.Law, st.Settings = law.Name, law.Settings
	if err := writeState(id, st); err != nil {
		return err
	}
	return cleanup.WriteJSON(id, LawFile, law)
}

// LawFile holds the law `topo up --cc` registered, with the calibration
// its parameters came from.
const LawFile = "law.json"

// InUse reports why run id cannot be brought up again: its namespaces or
// state exist (nil when neither does).
func InUse(id runid.ID) error {
	ns, err := cleanup.Namespaces(id)
	if err != nil {
		return err
	}
	_, serr := os.Stat(id.StateDir())
	if len(ns) > 0 || serr == nil {
		return fmt.Errorf("run %s is up (%d namespaces): cclab topo down --run %s first, or give another --run", id, len(ns), id)
	}
	return nil
}
