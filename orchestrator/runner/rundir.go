package runner

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"cclab/orchestrator/flows"
	"cclab/orchestrator/workload"
	"cclab/topology"
	"cclab/topology/ideal"
)

// Row is one line of flows.csv (docs/run-directory.md).
type Row struct {
	FlowID     int
	Src, Dst   string
	SrcAddr    string
	SrcPort    uint16
	DstAddr    string
	DstPort    uint16
	Size       uint64 // payload bytes; for a long-lived flow, what it delivered
	CC         string
	StartNs    int64
	EndNs      int64
	IdealFCTNs int64
	Status     string
	Group      string
}

var flowsHeader = []string{"flow_id", "src", "dst", "src_addr", "src_port", "dst_addr", "dst_port", "size_bytes", "cc", "start_ns", "end_ns", "fct_ns", "ideal_fct_ns", "status", "group"}

func rows(plan *topology.Plan, fr ideal.Framing, fl []workload.Flow, res []flows.Result) ([]Row, error) {
	paths := map[[2]string]ideal.Path{}
	out := make([]Row, len(fl))
	for i, f := range fl {
		r := res[i]
		size := f.Size
		if f.Long() || (f.Tool != "" && r.OK()) {
			size = r.Bytes // what a long flow or iperf3 actually sent
		}
		row := Row{FlowID: f.ID, Src: f.Src, Dst: f.Dst, SrcAddr: r.SrcAddr.String(), SrcPort: r.SrcPort,
			DstAddr: r.DstAddr.String(), DstPort: r.DstPort, Size: size, CC: f.CC,
			StartNs: r.StartNs, EndNs: r.EndNs, Status: r.Status, Group: f.Group}
		if r.SrcPort == 0 {
			row.DstPort = 0 // never connected
		}
		key := [2]string{f.Src, f.Dst}
		p, ok := paths[key]
		if !ok {
			var err error
			if p, err = ideal.PathOf(plan, f.Src, f.Dst, fr); err != nil {
				return nil, err
			}
			paths[key] = p
		}
		if size > 0 {
			row.IdealFCTNs = int64(p.FCT(size, fr))
		}
		out[i] = row
	}
	return out, nil
}

func writeFlowsCSV(path string, rows []Row) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write(flowsHeader)
	for _, r := range rows {
		start, end, fct := "", "", ""
		if r.StartNs != 0 {
			start = strconv.FormatInt(r.StartNs, 10)
		}
		if r.Status == "ok" {
			end = strconv.FormatInt(r.EndNs, 10)
			fct = strconv.FormatInt(r.EndNs-r.StartNs, 10)
		}
		w.Write([]string{strconv.Itoa(r.FlowID), r.Src, r.Dst, r.SrcAddr, strconv.Itoa(int(r.SrcPort)),
			r.DstAddr, strconv.Itoa(int(r.DstPort)), strconv.FormatUint(r.Size, 10), r.CC,
			start, end, fct, strconv.FormatInt(r.IdealFCTNs, 10), r.Status, r.Group})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
