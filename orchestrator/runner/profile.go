package runner

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"cclab/analysis/cpucost"
	"cclab/orchestrator/cleanup"
)

// Files of a profiled variant (`profile: true`).
const (
	PerfDataFile = "perf.data"
	CPUCostFile  = "cpu_cost.json"
	CPUCostText  = "cpu_cost.txt"
)

// ProfileHz is perf's sampling frequency per CPU: low enough that perf
// itself stays under 1 % of a CPU (docs/performance.md), high enough for
// a few thousand samples per second of workload.
const ProfileHz = 999

// profiler is the extension `profile: true` asks for: perf samples every
// CPU's call chains over the workload, and Stop classifies them
// (analysis/cpucost) into cpu_cost.json and cpu_cost.txt.
type profiler struct {
	dir   string
	cmd   *exec.Cmd
	start time.Time
}

// ProfileJSON is what run.json records under extensions.profile: the
// shares of each CPU's time, the stages summed, and the files.
type ProfileJSON struct {
	File        string    `json:"file"`
	Table       string    `json:"table"`
	Seconds     float64   `json:"seconds"`
	Samples     int       `json:"samples"`
	PacketShare []float64 `json:"packet_cpu_share"`
	BusyShare   []float64 `json:"busy_cpu_share"`
}

func (x *profiler) Name() string { return "profile" }

func (x *profiler) Start(ctx context.Context, env *Env) error {
	perf, err := exec.LookPath("perf")
	if err != nil {
		return fmt.Errorf("profile: perf not found (Debian's linux-perf; `make deps` installs it): %w", err)
	}
	x.dir = env.Dir
	x.cmd = exec.Command(perf, "record", "-q", "-e", "cpu-clock", "-F", fmt.Sprint(ProfileHz), "-a", "-g",
		"-o", filepath.Join(env.Dir, PerfDataFile))
	x.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := x.cmd.Start(); err != nil {
		return fmt.Errorf("profile: start perf: %w", err)
	}
	if err := cleanup.RecordPID(env.ID, x.cmd.Process.Pid); err != nil {
		_ = x.cmd.Process.Kill()
		_ = x.cmd.Wait()
		return fmt.Errorf("profile: %w", err)
	}
	x.start = time.Now()
	return nil
}

func (x *profiler) Stop(ctx context.Context) (any, error) {
	secs := time.Since(x.start).Seconds()
	_ = x.cmd.Process.Signal(syscall.SIGINT)
	werr := x.cmd.Wait()
	var exit *exec.ExitError
	if werr != nil && !(errors.As(werr, &exit) && exit.ExitCode() <= 130) {
		return nil, fmt.Errorf("profile: perf record: %w", werr)
	}
	b, err := cpucost.FromPerfData(ctx, filepath.Join(x.dir, PerfDataFile), runtime.NumCPU(), ProfileHz, secs)
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	if err := b.WriteFiles(filepath.Join(x.dir, CPUCostFile), filepath.Join(x.dir, CPUCostText)); err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	return ProfileJSON{File: CPUCostFile, Table: CPUCostText, Seconds: b.Seconds, Samples: b.Samples,
		PacketShare: b.PacketShare, BusyShare: b.BusyShare()}, nil
}
