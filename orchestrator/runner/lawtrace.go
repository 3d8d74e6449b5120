package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"cclab/kmod/lawload"
	"cclab/rundir"
)

// lawTrace is the extension `trace: true` asks for: the per-ACK trace of
// cclab's eBPF laws (every registered law's sockets) into cc_trace.csv.
type lawTrace struct {
	opts lawload.Options
	f    *os.File
	tr   *lawload.Trace
}

func (l *lawTrace) Name() string { return "cc_trace" }

func (l *lawTrace) Start(ctx context.Context, env *Env) error {
	f, err := os.Create(filepath.Join(env.Dir, rundir.CCTraceCSV))
	if err != nil {
		return fmt.Errorf("cc_trace.csv: %w", err)
	}
	tr, err := lawload.StartTrace(ctx, l.opts, f)
	if err != nil {
		f.Close()
		return err
	}
	l.f, l.tr = f, tr
	return nil
}

func (l *lawTrace) Stop(context.Context) (any, error) {
	st, err := l.tr.Stop()
	return st, errors.Join(err, l.f.Close())
}
