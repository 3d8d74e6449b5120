package rundir

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// FlowsColumns is flows.csv's header, in order.
var FlowsColumns = []string{"flow_id", "src", "dst", "src_addr", "src_port", "dst_addr", "dst_port", "size_bytes", "cc", "start_ns", "end_ns", "fct_ns", "ideal_fct_ns", "status", "group"}

// Flow is one row of flows.csv: a workload flow as its application saw it.
// Times are CLOCK_MONOTONIC nanoseconds.
type Flow struct {
	ID       string
	Src, Dst string // host names
	// SrcAddr, DstAddr: the connection's ends; the address is invalid when
	// the flow never got one, the ports 0 when it never got a socket.
	SrcAddr, DstAddr netip.AddrPort
	Size             uint64 // payload bytes; for a long-lived flow, what it delivered
	CC               string
	StartNs, EndNs   int64 // StartNs 0: never started; EndNs only for status ok
	FCTNs            int64 // as read from fct_ns; WriteFlows writes EndNs - StartNs
	IdealFCTNs       int64 // the flow alone on its path (topology/ideal); 0 for size 0
	Status           string
	Group            string // the workload entry the flow came from
	Line             int    // line in flows.csv, when read from one
}

// OK reports whether the flow completed.
func (f Flow) OK() bool { return f.Status == "ok" }

// WriteFlows writes flows.csv at path. fct_ns is EndNs - StartNs, written
// with end_ns for completed flows only; FCTNs is not read.
func WriteFlows(path string, flows []Flow) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write(FlowsColumns)
	addr := func(a netip.AddrPort) string {
		if !a.Addr().IsValid() {
			return ""
		}
		return a.Addr().String()
	}
	for _, r := range flows {
		start, end, fct := "", "", ""
		if r.StartNs != 0 {
			start = strconv.FormatInt(r.StartNs, 10)
		}
		if r.OK() {
			end = strconv.FormatInt(r.EndNs, 10)
			fct = strconv.FormatInt(r.EndNs-r.StartNs, 10)
		}
		w.Write([]string{r.ID, r.Src, r.Dst, addr(r.SrcAddr), strconv.Itoa(int(r.SrcAddr.Port())),
			addr(r.DstAddr), strconv.Itoa(int(r.DstAddr.Port())), strconv.FormatUint(r.Size, 10), r.CC,
			start, end, fct, strconv.FormatInt(r.IdealFCTNs, 10), r.Status, r.Group})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// ReadFlows reads the flows.csv of run directory dir; a missing file gives
// (nil, nil), an empty table a non-nil empty slice.
func ReadFlows(dir string) ([]Flow, error) {
	path := filepath.Join(dir, FlowsCSV)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseFlows(path, b)
}

// ParseFlows parses flows.csv's text b; path names it in errors, which
// give the line.
func ParseFlows(path string, b []byte) ([]Flow, error) {
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	hdr, err := r.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty, want header %s", path, strings.Join(FlowsColumns, ","))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range hdr {
		col[strings.TrimSpace(h)] = i
	}
	for _, h := range FlowsColumns {
		if _, ok := col[h]; !ok {
			return nil, fmt.Errorf("%s: header has no column %q", path, h)
		}
	}
	out := []Flow{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		if len(rec) != len(hdr) {
			return nil, fmt.Errorf("%s:%d: %d fields, want %d", path, line, len(rec), len(hdr))
		}
		f, err := parseFlow(rec, col)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		f.Line = line
		out = append(out, f)
	}
	return out, nil
}

func parseFlow(rec []string, col map[string]int) (Flow, error) {
	get := func(n string) string { return strings.TrimSpace(rec[col[n]]) }
	var err error
	num := func(n string) int64 {
		s := get(n)
		if s == "" || err != nil {
			return 0
		}
		v, e := strconv.ParseInt(s, 10, 64)
		if e != nil {
			err = fmt.Errorf("%s %q is not an integer", n, s)
		}
		return v
	}
	f := Flow{ID: get("flow_id"), Src: get("src"), Dst: get("dst"), CC: get("cc"), Status: get("status"), Group: get("group")}
	size := num("size_bytes")
	f.StartNs, f.EndNs, f.FCTNs, f.IdealFCTNs = num("start_ns"), num("end_ns"), num("fct_ns"), num("ideal_fct_ns")
	sp, dp := num("src_port"), num("dst_port")
	if err != nil {
		return Flow{}, err
	}
	if size < 0 {
		return Flow{}, errors.New("negative size")
	}
	for _, p := range []struct {
		col string
		v   int64
	}{{"src_port", sp}, {"dst_port", dp}} {
		if p.v < 0 || p.v > 65535 {
			return Flow{}, fmt.Errorf("%s %d out of range 0-65535", p.col, p.v)
		}
	}
	f.Size = uint64(size)
	if a, e := netip.ParseAddr(get("src_addr")); e == nil {
		f.SrcAddr = netip.AddrPortFrom(a, uint16(sp))
	}
	if a, e := netip.ParseAddr(get("dst_addr")); e == nil {
		f.DstAddr = netip.AddrPortFrom(a, uint16(dp))
	}
	return f, nil
}
