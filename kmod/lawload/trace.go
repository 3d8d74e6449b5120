package lawload

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/ringbuf"

	"cclab/kmod/law"
	"cclab/rundir"
)

// TraceHeader is cc_trace.csv's header (docs/run-directory.md).
var TraceHeader = strings.Join(rundir.CCTraceColumns, ",")

// traceRec mirrors struct cclab_trace_rec (kmod/bpf/cc_glue.h), whose
// g is struct glue_trace (kmod/law/glue.h): what the module traces too.
type traceRec struct {
	TimeNs       uint64
	LawCwndBytes uint64
	PacingRate   uint64 // bytes/s, 0: the law does not pace
	Signal       uint64
	CwndSegs     uint32
	Trace        uint32
	RTTus        uint32
	Law          uint8
	Nhops        uint8
	_            uint16
	Saddr        [4]byte
	Daddr        [4]byte
	Sport        uint16
	Dport        uint16
	MSS          uint32
}

// traceFlags names LAW_TR_* of kmod/law/law.h (TestTraceFlagsMatchLawH
// keeps the two in step).
var traceFlags = []struct {
	bit  uint32
	name string
}{
	{0x0001, "INIT"}, {0x0002, "RTT_UPDATE"}, {0x0004, "DECREASE"},
	{0x0008, "INCREASE"}, {0x0010, "HOLD"}, {0x0020, "NO_INT"},
	{0x0040, "INT_STALE"}, {0x0080, "INT_SAME"}, {0x0100, "INT_PATH"},
	{0x0200, "INT_BAD"}, {0x0400, "NO_RTT"}, {0x0800, "CLAMP_MIN"},
	{0x1000, "CLAMP_MAX"}, {0x2000, "MI"}, {0x4000, "AI"},
	{0x8000, "VAI"}, {0x10000, "SF"}, {0x20000, "ECE"},
}

func noteOf(trace uint32) string {
	var names []string
	for _, f := range traceFlags {
		if trace&f.bit != 0 {
			names = append(names, f.name)
			trace &^= f.bit
		}
	}
	if trace != 0 {
		names = append(names, "0x"+strconv.FormatUint(uint64(trace), 16))
	}
	return strings.Join(names, "|")
}

// TraceStats sums up a trace.
type TraceStats struct {
	Records uint64 // rows written
	Dropped uint64 // records the kernel lost to a full ring buffer
}

// Trace records the per-ACK trace of every law registered from one pin
// directory into a CSV writer. Only one trace can run at a time.
type Trace struct {
	ctl     *ebpf.Map
	rd      *ringbuf.Reader
	emit    func(*TraceRecord) error
	flush   func() error
	dropped uint64        // ctl's counter when the trace started
	done    chan error    // the reader's result
	quit    chan struct{} // closed by Stop
	stop    sync.Once
	stats   TraceStats
}

type ctlValue struct {
	Trace   uint32
	_       uint32
	Dropped uint64
}

// A TraceRecord is one law decision (a row of cc_trace.csv).
type TraceRecord struct {
	TimeNs        uint64 // CLOCK_MONOTONIC
	Local, Remote netip.AddrPort
	Law           string
	CwndBytes     uint64
	PacingBps     uint64 // 0: the law does not pace
	Signal        uint64
	SignalName    string // what Signal is, in the law's units (law.Signal)
	Note          string // the decision's flags
	LawCwndBytes  uint64
	RTTus         uint32
	Nhops         uint8
}

// StartTrace switches the trace on and writes records to w (header first)
// until Stop. At least one law must be registered (the trace maps are
// pinned with them).
func StartTrace(ctx context.Context, opts Options, w io.Writer) (*Trace, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	if _, err := bw.WriteString(TraceHeader + "\n"); err != nil {
		return nil, fmt.Errorf("write trace: %w", err)
	}
	var line []byte
	emit := func(r *TraceRecord) error {
		line = appendCSV(line[:0], r)
		if _, err := bw.Write(line); err != nil {
			return fmt.Errorf("write trace: %w", err)
		}
		return nil
	}
	return StartTraceFunc(ctx, opts, emit, bw.Flush)
}

// StartTraceFunc switches the trace on and hands each record to emit (on
// one goroutine; the record is reused after emit returns) until Stop,
// which calls flush (nil: nothing to flush) at the end.
func StartTraceFunc(ctx context.Context, opts Options, emit func(*TraceRecord) error, flush func() error) (*Trace, error) {
	if flush == nil {
		flush = func() error { return nil }
	}
	dir := opts.pinDir()
	ctl, err := ebpf.LoadPinnedMap(filepath.Join(dir, "cclab_cc_ctl"), nil)
	if err != nil {
		return nil, fmt.Errorf("open trace switch (is a law loaded? cclab cc load): %w", err)
	}
	rb, err := ebpf.LoadPinnedMap(filepath.Join(dir, "cclab_cc_trace"), nil)
	if err != nil {
		ctl.Close()
		return nil, fmt.Errorf("open trace ring buffer: %w", err)
	}
	rd, err := ringbuf.NewReader(rb)
	rb.Close()
	if err != nil {
		ctl.Close()
		return nil, fmt.Errorf("read trace ring buffer: %w", err)
	}
	var v ctlValue
	if err := ctl.Lookup(uint32(0), &v); err != nil {
		rd.Close()
		ctl.Close()
		return nil, fmt.Errorf("read trace switch: %w", err)
	}
	if v.Trace != 0 {
		rd.Close()
		ctl.Close()
		return nil, ErrTraceRunning
	}
	t := &Trace{ctl: ctl, rd: rd, emit: emit, flush: flush, dropped: v.Dropped, done: make(chan error, 1), quit: make(chan struct{})}
	v.Trace = 1
	if err := ctl.Put(uint32(0), v); err != nil {
		t.close()
		return nil, fmt.Errorf("switch trace on: %w", err)
	}
	go func() { t.done <- t.read() }()
	go func() {
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.quit:
		}
	}()
	return t, nil
}

// ErrTraceRunning: another trace (a run's cc_trace.csv, a watch) has the
// laws' trace; only one reads it at a time.
var ErrTraceRunning = errors.New("a trace of the laws is already running")

func (t *Trace) read() error {
	// The laws' names and signals by trace id (kmod/law/law_table.h),
	// looked up once, not per record.
	var names [256]struct{ law, signal string }
	for _, l := range law.All() {
		if int(l) < len(names) {
			names[l] = struct{ law, signal string }{l.String(), l.Signal()}
		}
	}
	var r traceRec
	var out TraceRecord
	for {
		rec, err := t.rd.Read()
		if errors.Is(err, ringbuf.ErrFlushed) || errors.Is(err, ringbuf.ErrClosed) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read trace: %w", err)
		}
		if len(rec.RawSample) != binary.Size(r) {
			return fmt.Errorf("trace record of %d bytes, this cclab reads %d: a law registered by another cclab build writes it (cclab cc unload, then load again)",
				len(rec.RawSample), binary.Size(r))
		}
		if _, err := binary.Decode(rec.RawSample, binary.NativeEndian, &r); err != nil {
			return fmt.Errorf("decode trace record: %w", err)
		}
		id := names[r.Law]
		out = TraceRecord{TimeNs: r.TimeNs, Local: netip.AddrPortFrom(netip.AddrFrom4(r.Saddr), r.Sport),
			Remote: netip.AddrPortFrom(netip.AddrFrom4(r.Daddr), r.Dport), Law: id.law,
			CwndBytes: uint64(r.CwndSegs) * uint64(r.MSS), Signal: r.Signal, SignalName: id.signal,
			Note: noteOf(r.Trace), LawCwndBytes: r.LawCwndBytes, RTTus: r.RTTus, Nhops: r.Nhops}
		if r.PacingRate != 0 && r.PacingRate <= math.MaxUint64/8 { // 0: not paced
			out.PacingBps = r.PacingRate * 8
		}
		if err := t.emit(&out); err != nil {
			return err
		}
		t.stats.Records++
	}
}

// appendCSV appends r as a row of cc_trace.csv.
func appendCSV(line []byte, r *TraceRecord) []byte {
	line = strconv.AppendUint(line, r.TimeNs, 10)
	line = append(line, ',')
	line = append(line, r.Local.String()...)
	line = append(line, '-')
	line = append(line, r.Remote.String()...)
	line = append(line, ',')
	line = append(line, r.Law...)
	line = append(line, ',')
	line = strconv.AppendUint(line, r.CwndBytes, 10)
	line = append(line, ',')
	if r.PacingBps != 0 { // empty: not paced
		line = strconv.AppendUint(line, r.PacingBps, 10)
	}
	line = append(line, ',')
	line = strconv.AppendUint(line, r.Signal, 10)
	line = append(line, ',')
	line = append(line, r.SignalName...)
	line = append(line, ',')
	line = append(line, r.Note...)
	line = append(line, ',')
	line = strconv.AppendUint(line, r.LawCwndBytes, 10)
	line = append(line, ',')
	line = strconv.AppendUint(line, uint64(r.RTTus), 10)
	line = append(line, ',')
	line = strconv.AppendUint(line, uint64(r.Nhops), 10)
	return append(line, '\n')
}

// Stop switches the trace off, writes what is still buffered and returns
// the totals. It may be called more than once.
func (t *Trace) Stop() (TraceStats, error) {
	var errs []error
	t.stop.Do(func() {
		close(t.quit)
		var v ctlValue
		if err := t.ctl.Lookup(uint32(0), &v); err != nil {
			errs = append(errs, fmt.Errorf("read trace switch: %w", err))
		}
		t.stats.Dropped = v.Dropped - t.dropped
		v.Trace = 0
		if err := t.ctl.Put(uint32(0), v); err != nil {
			errs = append(errs, fmt.Errorf("switch trace off: %w", err))
		}
		// The reader returns what is left, then ErrFlushed.
		if err := t.rd.Flush(); err != nil {
			errs = append(errs, fmt.Errorf("flush trace: %w", err))
		}
		errs = append(errs, <-t.done)
		errs = append(errs, t.flush())
		t.close()
	})
	return t.stats, errors.Join(errs...)
}

func (t *Trace) close() {
	t.rd.Close()
	t.ctl.Close()
}
