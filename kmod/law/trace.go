package law

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Event is one row of a trace CSV: an ACK and the INT echo it carries.
// The format is documented in kmod/law/README.md ("Trace format").
type Event struct {
	Line     int // line in the CSV, for messages
	TimeNs   uint64
	Acked    uint32
	ECEBytes uint32
	ECE      bool
	// NotCwndLimited: the window did not limit sending (column
	// not_cwnd_limited).
	NotCwndLimited bool
	// UE: TCD's undetermined mark came in the echo (column ue, LAW_ACK_UE).
	UE        bool
	RTTus     uint32
	SndNxt    *uint32 // nil: the replay keeps snd_nxt = snd_una + cwnd
	SndUna    *uint32 // nil: the replay advances snd_una by acked
	MSS       uint32  // 0: the replay's MSS
	EchoSeq   *uint32 // nil: every row with hops is a new echo
	EchoAgeNs uint64
	Hops      []TraceHop // empty: no echo on this ACK (unless a QCN cell)
	QCNFb     uint8      // a new QCN feedback's |Fb|, 0 = none on this row
	QCNCount  *uint32    // nil: each row with QCNFb is a new record
}

// TraceHop is one hop record of a trace row, before wrap-around: queue
// length and port rate as the record carries them, cumulative tx bytes and
// a timestamp (ns) that the replay reduces modulo the INT wrap periods.
type TraceHop struct {
	Qlen     uint64
	TxBytes  uint64
	TsNs     uint64
	RateMbps uint32
}

var traceScalar = map[string]bool{
	"time_ns": true, "acked": true, "ece": true, "ece_flag": true, "rtt_us": true,
	"snd_nxt": true, "snd_una": true, "mss": true, "echo_seq": true,
	"echo_age_ns": true, "nhops": true, "qcn_fb": true, "qcn_count": true,
}

var hopFields = []string{"qlen", "tx", "ts", "rate"}

// ReadTrace parses a trace CSV (header row first, '#' comment lines).
func ReadTrace(r io.Reader) ([]Event, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("trace: empty, want a header row")
		}
		return nil, fmt.Errorf("trace header: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(h)
		if _, dup := col[h]; dup {
			return nil, fmt.Errorf("trace header: column %q twice", h)
		}
		if !traceScalar[h] && !isHopColumn(h) {
			return nil, fmt.Errorf("trace header: unknown column %q", h)
		}
		col[h] = i
	}
	if _, ok := col["time_ns"]; !ok {
		return nil, fmt.Errorf("trace header: missing the time_ns column")
	}
	var events []Event
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("trace: %w", err)
		}
		line, _ := cr.FieldPos(0)
		ev, err := parseRow(rec, col, line)
		if err != nil {
			return nil, err
		}
		if n := len(events); n > 0 && ev.TimeNs < events[n-1].TimeNs {
			return nil, fmt.Errorf("trace line %d: time_ns %d goes backwards (previous %d)", line, ev.TimeNs, events[n-1].TimeNs)
		}
		events = append(events, ev)
	}
	return events, nil
}

func isHopColumn(h string) bool {
	for n := 1; n <= MaxHops; n++ {
		for _, f := range hopFields {
			if h == fmt.Sprintf("h%d_%s", n, f) {
				return true
			}
		}
	}
	return false
}

type rowReader struct {
	rec  []string
	col  map[string]int
	line int
	err  error
}

// get returns the cell of column name, "" when absent or empty.
func (r *rowReader) get(name string) string {
	i, ok := r.col[name]
	if !ok || i >= len(r.rec) {
		return ""
	}
	return strings.TrimSpace(r.rec[i])
}

func (r *rowReader) uint(name string, bits int) (uint64, bool) {
	s := r.get(name)
	if s == "" || r.err != nil {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, bits)
	if err != nil {
		r.err = fmt.Errorf("trace line %d: column %s: %q is not an unsigned %d-bit integer", r.line, name, s, bits)
		return 0, false
	}
	return v, true
}

func (r *rowReader) u32(name string) uint32 {
	v, _ := r.uint(name, 32)
	return uint32(v)
}

func (r *rowReader) optU32(name string) *uint32 {
	v, ok := r.uint(name, 32)
	if !ok {
		return nil
	}
	u := uint32(v)
	return &u
}

func parseRow(rec []string, col map[string]int, line int) (Event, error) {
	r := &rowReader{rec: rec, col: col, line: line}
	ev := Event{Line: line}
	t, ok := r.uint("time_ns", 64)
	if !ok && r.err == nil {
		return ev, fmt.Errorf("trace line %d: time_ns is empty", line)
	}
	ev.TimeNs = t
	ev.Acked = r.u32("acked")
	ev.ECEBytes = r.u32("ece")
	ev.ECE = r.u32("ece_flag") != 0
	ev.NotCwndLimited = r.u32("not_cwnd_limited") != 0
	ev.UE = r.u32("ue") != 0
	ev.RTTus = r.u32("rtt_us")
	ev.SndNxt = r.optU32("snd_nxt")
	ev.SndUna = r.optU32("snd_una")
	ev.MSS = r.u32("mss")
	ev.EchoSeq = r.optU32("echo_seq")
	ev.EchoAgeNs, _ = r.uint("echo_age_ns", 64)
	nh := r.u32("nhops")
	fb := r.u32("qcn_fb")
	ev.QCNCount = r.optU32("qcn_count")
	if r.err != nil {
		return ev, r.err
	}
	if int(fb) > QCNFbMax {
		return ev, fmt.Errorf("trace line %d: qcn_fb %d: at most %d", line, fb, QCNFbMax)
	}
	ev.QCNFb = uint8(fb)
	if int(nh) > MaxHops {
		return ev, fmt.Errorf("trace line %d: nhops %d: at most %d", line, nh, MaxHops)
	}
	for n := 1; n <= int(nh); n++ {
		var h TraceHop
		for _, f := range hopFields {
			name := fmt.Sprintf("h%d_%s", n, f)
			if r.get(name) == "" {
				return ev, fmt.Errorf("trace line %d: nhops is %d but %s is missing", line, nh, name)
			}
		}
		h.Qlen, _ = r.uint(fmt.Sprintf("h%d_qlen", n), 32)
		h.TxBytes, _ = r.uint(fmt.Sprintf("h%d_tx", n), 64)
		h.TsNs, _ = r.uint(fmt.Sprintf("h%d_ts", n), 64)
		rate, _ := r.uint(fmt.Sprintf("h%d_rate", n), 32)
		h.RateMbps = uint32(rate)
		if r.err != nil {
			return ev, r.err
		}
		ev.Hops = append(ev.Hops, h)
	}
	if ev.EchoAgeNs > ev.TimeNs && ev.hasEcho() {
		return ev, fmt.Errorf("trace line %d: echo_age_ns %d exceeds time_ns %d", line, ev.EchoAgeNs, ev.TimeNs)
	}
	return ev, nil
}

// hasEcho: the row's ACK finds an echo (hop records, or a QCN cell).
func (ev *Event) hasEcho() bool {
	return len(ev.Hops) > 0 || ev.QCNFb != 0 || ev.QCNCount != nil
}
