package live

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"cclab/internal/runid"
	"cclab/orchestrator/cleanup"
)

// ReadyFD is the descriptor a spawned supervisor reports readiness on
// (the first of exec.Cmd.ExtraFiles).
const ReadyFD = 3

// Start spawns the supervisor of run id as `EXE args...` (EXE: this
// program), detached from the caller's session, its output in the run's
// live.log, and waits until it reports ready or fails (with the end of its
// log in the error). The supervisor is recorded among the run's
// processes, so that tearing the run down stops it.
func Start(ctx context.Context, id runid.ID, args []string, timeout time.Duration) (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("start supervisor: %w", err)
	}
	if err := cleanup.EnsureStateDir(id); err != nil {
		return 0, err
	}
	logPath := filepath.Join(id.StateDir(), LogFile)
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, fmt.Errorf("supervisor log: %w", err)
	}
	defer logf.Close()
	rd, wr, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("start supervisor: %w", err)
	}
	defer rd.Close()
	cmd := exec.Command(exe, args...)
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{wr}
	// A session of its own: closing the terminal that ran `topo up`
	// (SIGHUP to its session) leaves the topology up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		wr.Close()
		return 0, fmt.Errorf("start supervisor: %w", err)
	}
	wr.Close()
	pid := cmd.Process.Pid
	if err := cleanup.RecordPID(id, pid); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return 0, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(rd).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		s = strings.TrimSpace(s)
		if s == "ok" {
			return pid, nil
		}
		<-exited
		if s == "" {
			return 0, fmt.Errorf("supervisor exited before it was ready: %s", tail(logPath))
		}
		return 0, fmt.Errorf("supervisor: %s", s)
	case <-time.After(timeout):
		cmd.Process.Kill()
		<-exited
		return 0, fmt.Errorf("supervisor not ready after %v: %s", timeout, tail(logPath))
	case <-ctx.Done():
		cmd.Process.Kill()
		<-exited
		return 0, ctx.Err()
	}
}

// ReadyWriter returns the function a spawned supervisor reports on: "ok"
// or the error, once, on ReadyFD; nil when it was not spawned by Start.
func ReadyWriter() func(error) {
	f := os.NewFile(ReadyFD, "ready")
	if f == nil {
		return func(error) {}
	}
	if _, err := f.Stat(); err != nil {
		return func(error) {}
	}
	return func(err error) {
		msg := "ok"
		if err != nil {
			msg = strings.ReplaceAll(err.Error(), "\n", "; ")
		}
		fmt.Fprintln(f, msg)
		f.Close()
	}
}

// tail is the last lines of a log, for an error.
func tail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "no log"
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	if s := strings.Join(lines, " | "); s != "" {
		return s
	}
	return errors.New("empty log").Error()
}
