package runner

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"

	"cclab/orchestrator/flows"
	"cclab/orchestrator/workload"
	"cclab/rundir"
	"cclab/topology"
	"cclab/topology/ideal"
)

// rows are flows.csv's rows: the workload's flows with their results and
// ideal FCTs.
func rows(plan *topology.Plan, fr ideal.Framing, fl []workload.Flow, res []flows.Result) ([]rundir.Flow, error) {
	paths := map[[2]string]ideal.Path{}
	out := make([]rundir.Flow, len(fl))
	for i, f := range fl {
		r := res[i]
		size := f.Size
		if f.Long() || (f.Tool != "" && r.OK()) {
			size = r.Bytes // what a long flow or iperf3 actually sent
		}
		dport := r.DstPort
		if r.SrcPort == 0 {
			dport = 0 // never connected
		}
		row := rundir.Flow{ID: strconv.Itoa(f.ID), Src: f.Src, Dst: f.Dst, SrcAddr: netip.AddrPortFrom(r.SrcAddr, r.SrcPort),
			DstAddr: netip.AddrPortFrom(r.DstAddr, dport), Size: size, CC: f.CC,
			StartNs: r.StartNs, EndNs: r.EndNs, Status: r.Status, Group: f.Group}
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

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
