package intswitch

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"cclab/rundir"
)

// The sampling periods StartSampling accepts.
const (
	MinSamplePeriod = 100 * time.Microsecond
	MaxSamplePeriod = 10 * time.Millisecond
)

// QueuesCSVHeader is the header line of queues.csv (docs/run-directory.md).
var QueuesCSVHeader = strings.Join(rundir.QueuesColumns, ",")

// A Sampler writes every port's queue length and transmitted bytes to a
// writer at a fixed period, as queues.csv rows.
type Sampler struct {
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
	err    error
	rows   uint64
}

// StartSampling writes the queues.csv header, then one row per port every
// period (CLOCK_MONOTONIC time) until ctx ends, Stop or Close. The period
// must be within [MinSamplePeriod, MaxSamplePeriod]; a loaded machine skips
// ticks. qlen_bytes is the port's root qdisc backlog as of its last packet
// event. One sampler runs per switch at a time.
func (s *Switch) StartSampling(ctx context.Context, period time.Duration, w io.Writer) (*Sampler, error) {
	if period < MinSamplePeriod || period > MaxSamplePeriod {
		return nil, fmt.Errorf("queue sampling period %v: use %v to %v", period, MinSamplePeriod, MaxSamplePeriod)
	}
	if w == nil {
		return nil, fmt.Errorf("queue sampling: no writer")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sampler != nil && !s.sampler.finished() {
		return nil, fmt.Errorf("queue sampling already running")
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if _, err := bw.WriteString(QueuesCSVHeader + "\n"); err != nil {
		return nil, fmt.Errorf("write queues header: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	smp := &Sampler{cancel: cancel, done: make(chan struct{})}
	s.sampler = smp
	go func() {
		defer close(smp.done)
		err := s.sampleLoop(ctx, period, bw, &smp.rows)
		if ferr := bw.Flush(); err == nil && ferr != nil {
			err = fmt.Errorf("write queues: %w", ferr)
		}
		smp.err = err
	}()
	return smp, nil
}

func (s *Switch) sampleLoop(ctx context.Context, period time.Duration, w *bufio.Writer, rows *uint64) error {
	t := time.NewTicker(period)
	defer t.Stop()
	var line []byte
	// One buffer for the run: the sampler allocates nothing per sample.
	states := make([]switchbpfPortState, len(s.ports))
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			return fmt.Errorf("clock: %w", err)
		}
		now := ts.Nano()
		if err := s.readStatesInto(states); err != nil {
			return err
		}
		for i, st := range states {
			line = strconv.AppendInt(line[:0], now, 10)
			line = append(line, ',')
			line = append(line, s.ports[i].Node...)
			line = append(line, ',')
			line = append(line, s.ports[i].Iface...)
			line = append(line, ',')
			line = strconv.AppendUint(line, st.Backlog, 10)
			line = append(line, ',')
			line = strconv.AppendUint(line, st.DeqBytes, 10)
			line = append(line, '\n')
			if _, err := w.Write(line); err != nil {
				return fmt.Errorf("write queues: %w", err)
			}
			*rows++
		}
	}
}

// Stop ends sampling, flushes what was sampled and returns the first error
// met while sampling.
func (smp *Sampler) Stop() error {
	smp.once.Do(smp.cancel)
	<-smp.done
	return smp.err
}

func (smp *Sampler) finished() bool {
	select {
	case <-smp.done:
		return true
	default:
		return false
	}
}

// Rows is the number of rows written; read it after Stop.
func (smp *Sampler) Rows() uint64 { return smp.rows }
