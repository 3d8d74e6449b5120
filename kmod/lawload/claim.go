package lawload

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"cclab/internal/runid"
)

// ClaimDir holds a marker per live run that registered cclab's laws or
// runs flows on them: the parameters it relies on, so that no one changes
// them under it (Reconcile, `cclab cc load`, `cclab cc unload` refuse).
// A marker counts while its run holds an flock on it, which the kernel
// drops when the process dies however it dies; a dead run's marker is
// removed by the next reader. Registration names are machine-wide, so one
// directory serves every pin directory.
const ClaimDir = runid.StateRoot + "/laws.claims"

// A Claim is one live run's marker.
type Claim struct {
	Run string `json:"run"`
	PID int    `json:"pid"`
	// Laws maps each registered name the run relies on to its
	// parameters (Params.String()).
	Laws map[string]string `json:"laws"`
}

// ClaimHold keeps a claim until Release or the process's death.
type ClaimHold struct {
	f    *os.File
	path string
}

func (o Options) claimDir() string {
	if o.ClaimDir != "" {
		return o.ClaimDir
	}
	return ClaimDir
}

// HoldClaim records that run id relies on regs with their parameters.
// The marker is locked before it gets its name, so that no reader ever
// sees it unlocked and takes it for a dead run's.
func HoldClaim(id runid.ID, regs []Registration, opts Options) (*ClaimHold, error) {
	c := Claim{Run: string(id), PID: os.Getpid(), Laws: map[string]string{}}
	for _, r := range regs {
		c.Laws[r.Name] = r.Params.String()
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("claim laws: %w", err)
	}
	dir := opts.claimDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("claim laws: %w", err)
	}
	f, err := os.CreateTemp(dir, ".new-"+string(id)+"-*")
	if err != nil {
		return nil, fmt.Errorf("claim laws: %w", err)
	}
	fail := func(err error) (*ClaimHold, error) {
		os.Remove(f.Name())
		f.Close()
		return nil, fmt.Errorf("claim laws: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return fail(err)
	}
	if _, err := f.Write(b); err != nil {
		return fail(err)
	}
	final := filepath.Join(dir, string(id)+"-"+strings.TrimPrefix(filepath.Base(f.Name()), ".new-"+string(id)+"-")+".json")
	if err := os.Rename(f.Name(), final); err != nil {
		return fail(err)
	}
	return &ClaimHold{f: f, path: final}, nil
}

// Release removes the claim.
func (h *ClaimHold) Release() error {
	if h == nil || h.f == nil {
		return nil
	}
	err := os.Remove(h.path)
	if os.IsNotExist(err) {
		err = nil
	}
	err = errors.Join(err, h.f.Close())
	h.f = nil
	return err
}

// LiveClaims lists the claims of live runs, sorted by run, and removes the
// markers of dead ones.
func LiveClaims(opts Options) ([]Claim, error) {
	markers, err := filepath.Glob(filepath.Join(opts.claimDir(), "*.json"))
	if err != nil {
		return nil, fmt.Errorf("law claims: %w", err)
	}
	var out []Claim
	for _, m := range markers {
		c, live, err := readClaim(m)
		if err != nil {
			return nil, err
		}
		if live {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Run < out[j].Run })
	return out, nil
}

// readClaim reads a marker if a live run holds it; a dead run's is
// removed.
func readClaim(path string) (Claim, bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return Claim{}, false, nil
	}
	if err != nil {
		return Claim{}, false, fmt.Errorf("law claims: %w", err)
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB) == nil {
		os.Remove(path) // nobody holds it: its run has ended
		return Claim{}, false, nil
	}
	var c Claim
	if err := json.NewDecoder(f).Decode(&c); err != nil {
		return Claim{}, false, fmt.Errorf("law claim %s: %w", path, err)
	}
	return c, true, nil
}

// ClaimConflict is a registered name a live run relies on with other
// parameters than asked.
type ClaimConflict struct {
	Name  string
	Have  string // the run's parameters
	Want  string // "" for an unregistration
	Claim Claim
}

func (c ClaimConflict) String() string {
	if c.Want == "" {
		return fmt.Sprintf("%s is in use by run %s (pid %d), which is up", c.Name, c.Claim.Run, c.Claim.PID)
	}
	return fmt.Sprintf("%s is registered with %s for run %s (pid %d), which is up; asked: %s", c.Name, c.Have, c.Claim.Run, c.Claim.PID, c.Want)
}

// ErrClaimed is wrapped by the errors of a change to laws that live runs
// rely on.
var ErrClaimed = errors.New("cclab does not change the laws of a live run")

// claimedError joins conflicts into an error wrapping ErrClaimed.
func claimedError(cs []ClaimConflict) error {
	if len(cs) == 0 {
		return nil
	}
	lines := make([]string, len(cs))
	for i, c := range cs {
		lines[i] = c.String()
	}
	return fmt.Errorf("%s: %w", strings.Join(lines, "; "), ErrClaimed)
}

// CheckClaims refuses registering laws with the parameters the settings
// ask for (see Resolve) where a live run relies on their names with other
// parameters: the error names the runs.
func CheckClaims(laws, settings []string, opts Options) error {
	want, err := Resolve(laws, settings)
	if err != nil {
		return err
	}
	claims, err := LiveClaims(opts)
	if err != nil {
		return err
	}
	var cs []ClaimConflict
	for _, ps := range want {
		name := opts.name(ps.Law)
		for _, c := range claims {
			if have, ok := c.Laws[name]; ok && have != ps.String() {
				cs = append(cs, ClaimConflict{Name: name, Have: have, Want: ps.String(), Claim: c})
			}
		}
	}
	return claimedError(cs)
}

// CheckUnclaimed refuses unregistering names a live run relies on.
func CheckUnclaimed(names []string, opts Options) error {
	claims, err := LiveClaims(opts)
	if err != nil {
		return err
	}
	var cs []ClaimConflict
	for _, n := range names {
		for _, c := range claims {
			if have, ok := c.Laws[n]; ok {
				cs = append(cs, ClaimConflict{Name: n, Have: have, Claim: c})
			}
		}
	}
	return claimedError(cs)
}
