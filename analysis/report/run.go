// Package report turns a run directory (or captures from anywhere) into the
// tables, plots and pages the papers report. Analyze computes; Write puts
// the result on disk.
package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"cclab/topology"
	"cclab/topology/ideal"
)

// RunInfo is what analysis needs from run.json (docs/run-directory.md).
type RunInfo struct {
	ID         string `json:"id"`
	Experiment struct {
		Name     string `json:"name"`
		Topology string `json:"topology"`
	} `json:"experiment"`
	ClockOffsetNs int64          `json:"clock_offset_ns"`
	CaptureDrops  uint64         `json:"capture_drops"` // packets the capture rings dropped
	Topology      *topology.Plan `json:"topology"`
	Framing       *struct {
		MSS         int `json:"mss"`
		HeaderBytes int `json:"header_bytes"`
	} `json:"framing"`
	// Fidelity is the emulation's verdict (absent in runs before it).
	Fidelity *struct {
		Verdict string   `json:"verdict"`
		Reasons []string `json:"reasons"`
	} `json:"fidelity"`
}

func readRunInfo(dir string) (*RunInfo, error) {
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return nil, fmt.Errorf("read run.json: %w", err)
	}
	var ri RunInfo
	if err := json.Unmarshal(b, &ri); err != nil {
		return nil, fmt.Errorf("parse %s: %w", filepath.Join(dir, "run.json"), err)
	}
	return &ri, nil
}

func (ri *RunInfo) framing() ideal.Framing {
	if ri.Framing != nil && ri.Framing.MSS > 0 {
		return ideal.Framing{MSS: ri.Framing.MSS, HeaderBytes: ri.Framing.HeaderBytes}
	}
	return ideal.DefaultFraming
}

// AppFlow is one row of flows.csv.
type AppFlow struct {
	ID         string
	Src, Dst   string
	SrcAddr    netip.AddrPort
	DstAddr    netip.AddrPort
	Size       uint64
	CC         string
	StartNs    int64 // CLOCK_MONOTONIC
	EndNs      int64
	FCTNs      int64
	IdealFCTNs int64
	Status     string
	Group      string
	Line       int
}

var flowsHeader = []string{"flow_id", "src", "dst", "src_addr", "src_port", "dst_addr", "dst_port", "size_bytes", "cc", "start_ns", "end_ns", "fct_ns", "ideal_fct_ns", "status", "group"}

// readAppFlows reads flows.csv; a missing file gives (nil, nil).
func readAppFlows(dir string) ([]AppFlow, error) {
	path := filepath.Join(dir, "flows.csv")
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parseAppFlows(path, b)
}

func parseAppFlows(path string, b []byte) ([]AppFlow, error) {
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	hdr, err := r.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty, want header %s", path, strings.Join(flowsHeader, ","))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range hdr {
		col[strings.TrimSpace(h)] = i
	}
	for _, h := range flowsHeader {
		if _, ok := col[h]; !ok {
			return nil, fmt.Errorf("%s: header has no column %q", path, h)
		}
	}
	out := []AppFlow{} // non-nil: the file exists, even with no rows
	for {
		f, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		lineNo, _ := r.FieldPos(0)
		if len(f) != len(hdr) {
			return nil, fmt.Errorf("%s:%d: %d fields, want %d", path, lineNo, len(f), len(hdr))
		}
		get := func(n string) string { return strings.TrimSpace(f[col[n]]) }
		num := func(n string) (int64, error) {
			s := get(n)
			if s == "" {
				return 0, nil
			}
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s:%d: %s %q is not an integer", path, lineNo, n, s)
			}
			return v, nil
		}
		af := AppFlow{ID: get("flow_id"), Src: get("src"), Dst: get("dst"), CC: get("cc"), Status: get("status"), Group: get("group"), Line: lineNo}
		var size, sp, dp int64
		if size, err = num("size_bytes"); err != nil {
			return nil, err
		}
		if size < 0 {
			return nil, fmt.Errorf("%s:%d: negative size", path, lineNo)
		}
		af.Size = uint64(size)
		if af.StartNs, err = num("start_ns"); err != nil {
			return nil, err
		}
		if af.EndNs, err = num("end_ns"); err != nil {
			return nil, err
		}
		if af.FCTNs, err = num("fct_ns"); err != nil {
			return nil, err
		}
		if af.IdealFCTNs, err = num("ideal_fct_ns"); err != nil {
			return nil, err
		}
		if sp, err = num("src_port"); err != nil {
			return nil, err
		}
		if dp, err = num("dst_port"); err != nil {
			return nil, err
		}
		if a, err := netip.ParseAddr(get("src_addr")); err == nil {
			af.SrcAddr = netip.AddrPortFrom(a, uint16(sp))
		}
		if a, err := netip.ParseAddr(get("dst_addr")); err == nil {
			af.DstAddr = netip.AddrPortFrom(a, uint16(dp))
		}
		out = append(out, af)
	}
	return out, nil
}

// pcapFiles lists the run's captures in name order.
func pcapFiles(dir string) ([]string, error) {
	var out []string
	for _, pat := range []string{"*.pcap", "*.pcapng"} {
		m, err := filepath.Glob(filepath.Join(dir, "pcap", pat))
		if err != nil {
			return nil, err
		}
		out = append(out, m...)
	}
	sort.Strings(out)
	return out, nil
}

// hostOf maps addresses (host identities and port addresses) to node names.
func hostOf(p *topology.Plan) map[netip.Addr]string {
	m := map[netip.Addr]string{}
	if p == nil {
		return m
	}
	for _, n := range p.Nodes {
		if n.Addr.IsValid() {
			m[n.Addr] = n.Name
		}
	}
	for _, l := range p.Links {
		for _, pt := range []topology.Port{l.A, l.B} {
			if pt.Addr.IsValid() {
				if _, ok := m[pt.Addr.Addr()]; !ok {
					m[pt.Addr.Addr()] = pt.Node
				}
			}
		}
	}
	return m
}
