package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"cclab/internal/bpfpin"
	"cclab/internal/runid"
	"cclab/tcopt"
)

// EchoPinDir is where cclab_int_echo is pinned for the laws (int_echo.h).
const EchoPinDir = "/sys/fs/bpf/cclab-cc"

// EchoMapName is the echo map's name and pin name (int_echo.h).
const EchoMapName = "cclab_int_echo"

const linkPinName = "int_agent_link"

// Options tune Attach; the zero value is what a run wants.
type Options struct {
	// EchoPinDir is the bpffs directory of the shared echo map: the laws'
	// pin directory, default EchoPinDir. A map already pinned there is
	// reused; Close unpins it when no other program uses it. Tests point
	// it at a directory of their own.
	EchoPinDir string
	// CgroupRoot is the cgroup v2 mount; default: found in mountinfo.
	CgroupRoot string
	// QCNSlot leaves an empty record slot in every echo, for a switch on
	// the way back to write a QCN congestion point's feedback into
	// (tcopt/README.md, "QCN feedback"): for runs with congestion points.
	QCNSlot bool
}

// Echo.Flags (int_echo.h INT_ECHO_*).
const (
	EchoOverflow = tcopt.HdrOvfl // the path had more hops than slots
	EchoUE       = 0x08          // TCD's U: a port on the path was undetermined since the previous echo
)

// Echo is one socket's newest echo, struct int_echo of int_echo.h.
type Echo struct {
	ArrivedNs uint64 // CLOCK_MONOTONIC ns when the echo was parsed
	Count     uint32 // echoes parsed on this socket so far
	NHops     uint8  // valid records in Hop, path order
	Flags     uint8  // EchoOverflow, EchoUE
	Pad       uint16
	Hop       [tcopt.MaxHops]tcopt.Hop
	QCNCount  uint32 // distinct QCN feedback records taken (tcopt/README.md)
	QCNKey    uint32 // CP << 16 | sample number of the newest
	QCNFb     uint8  // its quantised |Fb|, 1..63
	QCNPad    [7]uint8
}

// Agent is the host agent attached to one run's cgroup.
type Agent struct {
	id       runid.ID
	cgroup   string // absolute cgroup directory
	root     string // cgroup2 mount
	madeCg   bool
	objs     sockopsObjects
	link     link.Link
	pins     []string // files Close unpins, in order
	echoPin  string   // the shared echo map's pin, once loaded
	progID   ebpf.ProgramID
	bpfDir   string
	dirs     []string // bpffs directories Attach created, outermost first
	mu       sync.Mutex
	moved    map[int]string // pid -> its cgroup before AddProcess
	closeErr error
	closed   bool
}

// Attach loads the agent and attaches it to the run's cgroup
// <cgroup2>/cclab-<id>, created if missing. On error nothing is left.
func Attach(ctx context.Context, id runid.ID, opts Options) (_ *Agent, err error) {
	if _, err := runid.Parse(string(id)); err != nil {
		return nil, fmt.Errorf("attach INT agent: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("attach INT agent: %w", err)
	}
	if opts.EchoPinDir == "" {
		opts.EchoPinDir = EchoPinDir
	}
	if opts.CgroupRoot == "" {
		if opts.CgroupRoot, err = Cgroup2Mount(); err != nil {
			return nil, fmt.Errorf("attach INT agent: %w", err)
		}
	}
	a := &Agent{
		id:     id,
		root:   opts.CgroupRoot,
		cgroup: filepath.Join(opts.CgroupRoot, runid.Mark+string(id)),
		bpfDir: id.BPFDir(),
		moved:  map[int]string{},
	}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()

	for _, d := range []string{a.bpfDir, opts.EchoPinDir} {
		if err := a.mkdirAll(d); err != nil {
			return nil, fmt.Errorf("attach INT agent: %w", err)
		}
	}
	echoPin := filepath.Join(opts.EchoPinDir, EchoMapName)
	_, statErr := os.Stat(echoPin)
	echoPinned := statErr == nil

	spec, err := loadSockops()
	if err != nil {
		return nil, fmt.Errorf("attach INT agent: load spec: %w", err)
	}
	if opts.QCNSlot {
		v, ok := spec.Variables["qcn_echo_slot"]
		if !ok {
			return nil, fmt.Errorf("attach INT agent: the object has no qcn_echo_slot")
		}
		if err := v.Set(uint8(1)); err != nil {
			return nil, fmt.Errorf("attach INT agent: qcn_echo_slot: %w", err)
		}
	}
	err = spec.LoadAndAssign(&a.objs, &ebpf.CollectionOptions{
		Maps: ebpf.MapOptions{PinPath: opts.EchoPinDir},
	})
	// Maps are pinned as they are created, before the programs load: a pin
	// this call made goes again if the load fails. Once loaded, the echo
	// map is shared: Close unpins it only when no one else uses it.
	if err != nil {
		if _, statErr := os.Stat(echoPin); statErr == nil && !echoPinned {
			a.pins = append(a.pins, echoPin)
		}
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			return nil, fmt.Errorf("attach INT agent: verifier: %+v", ve)
		}
		return nil, fmt.Errorf("attach INT agent: load: %w", err)
	}
	a.echoPin = echoPin
	if info, err := a.objs.CclabIntAgent.Info(); err == nil {
		a.progID, _ = info.ID()
	}
	statsPin := filepath.Join(a.bpfDir, statsPinName)
	if err := a.objs.CclabIntStats.Pin(statsPin); err != nil {
		return nil, fmt.Errorf("attach INT agent: pin counters: %w", err)
	}
	a.pins = append(a.pins, statsPin)

	if err := os.Mkdir(a.cgroup, 0o755); err == nil {
		a.madeCg = true
	} else if !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("attach INT agent: create cgroup: %w", err)
	}
	a.link, err = link.AttachCgroup(link.CgroupOptions{
		Path:    a.cgroup,
		Attach:  ebpf.AttachCGroupSockOps,
		Program: a.objs.CclabIntAgent,
	})
	if err != nil {
		return nil, fmt.Errorf("attach INT agent to %s: %w", a.cgroup, err)
	}
	linkPin := filepath.Join(a.bpfDir, linkPinName)
	if err := a.link.Pin(linkPin); err != nil {
		return nil, fmt.Errorf("attach INT agent: pin link: %w", err)
	}
	return a, nil
}

// Cgroup is the run's cgroup directory the agent is attached to.
func (a *Agent) Cgroup() string { return a.cgroup }

// AddProcess moves a process (all its threads) into the run's cgroup:
// sockets it creates from now on carry the option. Close moves it back.
func (a *Agent) AddProcess(pid int) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	orig, err := cgroupOf(pid)
	if err != nil {
		return err
	}
	if err := moveTo(a.cgroup, pid); err != nil {
		return err
	}
	if _, seen := a.moved[pid]; !seen {
		a.moved[pid] = orig
	}
	return nil
}

// Start starts cmd as a new process inside the run's cgroup (clone3 with
// CLONE_INTO_CGROUP), so that every socket it opens carries the option:
// for flow programs such as iperf3. The caller waits for it as usual.
func (a *Agent) Start(cmd *exec.Cmd) error {
	dir, err := os.Open(a.cgroup)
	if err != nil {
		return fmt.Errorf("start %s in cgroup: %w", cmd.Path, err)
	}
	defer dir.Close()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.UseCgroupFD = true
	cmd.SysProcAttr.CgroupFD = int(dir.Fd())
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s in cgroup %s: %w", cmd.Path, a.cgroup, err)
	}
	return nil
}

// Stats reads the agent's counters.
func (a *Agent) Stats() (Stats, error) { return readStats(a.objs.CclabIntStats) }

// echoSock is the echo map's value, struct int_echo_sock of int_echo.h:
// the echo, then the congestion control's area (not the agent's).
type echoSock struct {
	Echo Echo
	CC   [echoCCBytes]byte
}

// echoCCBytes is INT_ECHO_CC_BYTES of int_echo.h.
const echoCCBytes = 192

// Echo reads the newest echo of a socket (a TCP socket's fd in this
// process); ok=false when none has arrived. An INT law creates the
// storage at its init (its data lives there), before any echo: count 0.
func (a *Agent) Echo(fd int) (e Echo, ok bool, err error) {
	var v echoSock
	err = a.objs.CclabIntEcho.Lookup(int32(fd), &v)
	if errors.Is(err, ebpf.ErrKeyNotExist) {
		return Echo{}, false, nil
	}
	if err != nil {
		return Echo{}, false, fmt.Errorf("read INT echo of fd %d: %w", fd, err)
	}
	if v.Echo.Count == 0 {
		return Echo{}, false, nil
	}
	return v.Echo, true, nil
}

// EchoMap is the shared echo map (for readers in this process).
func (a *Agent) EchoMap() *ebpf.Map { return a.objs.CclabIntEcho }

// Close detaches the agent, moves the processes it moved back where they
// were, and removes the cgroup, pins and directories Attach created.
// Sockets keep what their storage holds. Close is idempotent.
func (a *Agent) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return a.closeErr
	}
	a.closed = true
	var errs []error
	if a.link != nil {
		if err := a.link.Unpin(); err != nil {
			errs = append(errs, fmt.Errorf("unpin INT agent link: %w", err))
		}
		if err := a.link.Close(); err != nil {
			errs = append(errs, fmt.Errorf("detach INT agent: %w", err))
		}
	}
	for pid, orig := range a.moved {
		cur, err := cgroupOf(pid)
		if err != nil || filepath.Join(a.root, cur) != a.cgroup {
			continue // exited, or moved elsewhere since
		}
		if err := moveTo(filepath.Join(a.root, orig), pid); err != nil {
			errs = append(errs, err)
		}
	}
	if a.madeCg {
		if err := rmdirRetry(a.cgroup); err != nil {
			errs = append(errs, fmt.Errorf("remove cgroup: %w", err))
		}
	}
	for _, p := range a.pins {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("unpin %s: %w", p, err))
		}
	}
	a.objs.Close()
	// The last user of the echo map unpins it: the laws' programs that
	// read it, or another run's agent, keep it (see tcopt/README.md). Its
	// directory goes when empty, as the laws' Unload does.
	if a.echoPin != "" {
		used, err := bpfpin.Users(a.progID)
		if err == nil {
			_, err = bpfpin.UnpinUnused(a.echoPin, used)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("release INT echo map: %w", err))
		}
		os.Remove(filepath.Dir(a.echoPin))
	}
	// Directories Attach made go when empty: other parts pin there too.
	for i := len(a.dirs) - 1; i >= 0; i-- {
		os.Remove(a.dirs[i])
	}
	a.closeErr = errors.Join(errs...)
	return a.closeErr
}

// mkdirAll makes dir and any missing parents, remembering what it made.
func (a *Agent) mkdirAll(dir string) error {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("create %s: %w", missing[i], err)
		} else if err == nil {
			a.dirs = append(a.dirs, missing[i])
		}
	}
	return nil
}

// rmdirRetry removes a cgroup; a process that just left it may still be
// counted for a moment.
func rmdirRetry(dir string) error {
	var err error
	for i := 0; i < 50; i++ {
		if err = os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return err
}
