// Package doctor checks what a cclab run needs of a machine, one line per
// check, and tells a node that can never run it (no BTF, no root) from one
// that should try again later (another run holds its kernel, the
// hypervisor is stealing its CPUs): a scheduler requeues on the second,
// drains the node on the first.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/features"
	"golang.org/x/sys/unix"

	"cclab/internal/hostlock"
	"cclab/internal/tcx"
)

// Severity of a failed check.
type Severity string

const (
	OK       Severity = "ok"
	Info     Severity = "info"  // not needed by a run; said for the reader
	Retry    Severity = "retry" // this node cannot run now; it may later
	Never    Severity = "never" // this node cannot run cclab as it is
	maxSteal          = 0.05    // the share of CPU time stolen beyond which runs come out degraded
)

// Check is one line of the report.
type Check struct {
	Name     string   `json:"name"`
	Severity Severity `json:"severity"`
	Detail   string   `json:"detail"`
}

// Exit codes of `cclab doctor`: 0 ready, 69 (EX_UNAVAILABLE) never on
// this node, 75 (EX_TEMPFAIL) not now.
const (
	ExitNever = 69
	ExitRetry = 75
)

// Options are the machine's paths, for tests.
type Options struct {
	LockPath string        // the host lock (default hostlock.DefaultPath)
	Sample   time.Duration // how long to watch /proc/stat for steal (default 1 s)
}

// Run runs every check.
func Run(ctx context.Context, opt Options) []Check {
	if opt.LockPath == "" {
		opt.LockPath = hostlock.DefaultPath
	}
	if opt.Sample == 0 {
		opt.Sample = time.Second
	}
	var out []Check
	add := func(name string, sev Severity, format string, a ...any) {
		out = append(out, Check{Name: name, Severity: sev, Detail: fmt.Sprintf(format, a...)})
	}
	if os.Geteuid() == 0 {
		add("root", OK, "running as root")
	} else {
		add("root", Never, "cclab builds namespaces and loads BPF: run it as root")
	}
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err == nil {
		add("btf", OK, "/sys/kernel/btf/vmlinux")
	} else {
		add("btf", Never, "no kernel BTF (/sys/kernel/btf/vmlinux): the laws' BPF objects relocate against it")
	}
	probe := func(name string, pt ebpf.ProgramType, why string) {
		switch err := features.HaveProgramType(pt); {
		case err == nil:
			add(name, OK, "the kernel loads %s programs", pt)
		case errors.Is(err, ebpf.ErrNotSupported):
			add(name, Never, "no %s programs: %s", pt, why)
		default:
			add(name, Never, "probing %s programs: %v", pt, err)
		}
	}
	probe("struct_ops", ebpf.StructOps, "the laws register as BPF congestion controls (or load them as modules)")
	probe("tc", ebpf.SchedCLS, "the INT switch and the delay line are tc programs")
	if ok, err := tcx.Supported(); err != nil {
		add("tcx", Info, "%v", err)
	} else if ok {
		add("tcx", OK, "tcx links (the tc programs attach as links)")
	} else {
		add("tcx", Info, "no tcx: cls_bpf filters on clsact instead")
	}
	if fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0); err == nil {
		unix.Close(fd)
		add("delay line", OK, "AF_PACKET sockets (cclab's delay line; netem is not needed)")
	} else {
		add("delay line", Never, "no AF_PACKET socket: %v", err)
	}
	cpus := runtime.GOMAXPROCS(0)
	if cpus >= 2 {
		add("cpus", OK, "%d CPUs this process may use", cpus)
	} else {
		add("cpus", Never, "%d CPU: the delay line needs one of its own beside the packet work", cpus)
	}
	if steal, err := stealShare(ctx, opt.Sample); err != nil {
		add("steal", Info, "%v", err)
	} else if steal > maxSteal {
		add("steal", Retry, "the hypervisor took %.1f %% of the CPUs over %v: runs now would be judged degraded", 100*steal, opt.Sample)
	} else {
		add("steal", OK, "%.2f %% of CPU time stolen over %v", 100*steal, opt.Sample)
	}
	if l, err := hostlock.Acquire(ctx, opt.LockPath, false); err == nil {
		l.Release()
		add("host lock", OK, "no other cclab run holds this kernel")
	} else if errors.Is(err, hostlock.ErrBusy) {
		add("host lock", Retry, "%v", err)
	} else {
		add("host lock", Never, "%v", err)
	}
	if b, err := os.ReadFile("/proc/sys/kernel/modules_disabled"); err == nil && strings.TrimSpace(string(b)) == "0" {
		if _, err := os.Stat("/proc/modules"); err == nil {
			add("modules", Info, "module loading is on: the laws may also load as kernel modules (kmod/)")
		} else {
			add("modules", Info, "no module loading: the laws run as BPF struct_ops")
		}
	} else {
		add("modules", Info, "no module loading: the laws run as BPF struct_ops")
	}
	return out
}

// Exit is the exit code of a report: the worst failure's.
func Exit(checks []Check) int {
	code := 0
	for _, c := range checks {
		switch c.Severity {
		case Never:
			return ExitNever
		case Retry:
			code = ExitRetry
		}
	}
	return code
}

// stealShare is the hypervisor's share of all CPU time over d.
func stealShare(ctx context.Context, d time.Duration) (float64, error) {
	read := func() (total, steal float64, err error) {
		b, err := os.ReadFile("/proc/stat")
		if err != nil {
			return 0, 0, err
		}
		line, _, _ := strings.Cut(string(b), "\n")
		f := strings.Fields(line)
		if len(f) < 9 || f[0] != "cpu" {
			return 0, 0, fmt.Errorf("/proc/stat: unexpected first line %q", line)
		}
		for i, s := range f[1:9] {
			x, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("/proc/stat: %w", err)
			}
			total += x
			if i == 7 {
				steal = x
			}
		}
		return total, steal, nil
	}
	t0, s0, err := read()
	if err != nil {
		return 0, err
	}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(d):
	}
	t1, s1, err := read()
	if err != nil {
		return 0, err
	}
	if t1 <= t0 {
		return 0, nil
	}
	return (s1 - s0) / (t1 - t0), nil
}
