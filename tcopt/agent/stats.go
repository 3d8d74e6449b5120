package agent

import (
	"fmt"
	"path/filepath"

	"github.com/cilium/ebpf"

	"cclab/internal/runid"
)

// Stats are the agent's counters summed over CPUs (tcopt/bpf/agent_stats.h).
type Stats struct {
	OptionsWritten  uint64 `json:"options_written"`  // empty forward options on data skbs
	EchoesWritten   uint64 `json:"echoes_written"`   // echoes on ACKs
	ForwardsParsed  uint64 `json:"forwards_parsed"`  // forward options received and kept
	EchoesParsed    uint64 `json:"echoes_parsed"`    // echoes decoded into cclab_int_echo
	Malformed       uint64 `json:"malformed"`        // options of ours ignored whole
	BadRecords      uint64 `json:"bad_records"`      // echoed records dropped (bad rate code)
	ReserveFailed   uint64 `json:"reserve_failed"`   // no option space left on a segment
	EchoesTruncated uint64 `json:"echoes_truncated"` // echoes that lost records to SACK blocks
}

const statsPinName = "int_agent_stats"

func readStats(m *ebpf.Map) (Stats, error) {
	var sum [8]uint64
	for i := range sum {
		var perCPU []uint64
		if err := m.Lookup(uint32(i), &perCPU); err != nil {
			return Stats{}, fmt.Errorf("read INT agent counter %d: %w", i, err)
		}
		for _, v := range perCPU {
			sum[i] += v
		}
	}
	return Stats{sum[0], sum[1], sum[2], sum[3], sum[4], sum[5], sum[6], sum[7]}, nil
}

// RunStats reads the counters of the agent attached for run id, from its
// pinned map (for a process other than the one that attached it).
func RunStats(id runid.ID) (Stats, error) {
	p := filepath.Join(id.BPFDir(), statsPinName)
	m, err := ebpf.LoadPinnedMap(p, &ebpf.LoadPinOptions{ReadOnly: true})
	if err != nil {
		return Stats{}, fmt.Errorf("open INT agent counters of run %s: %w", id, err)
	}
	defer m.Close()
	return readStats(m)
}

// Runs lists the runs with an INT agent attached (a pinned counter map).
func Runs() ([]runid.ID, error) {
	paths, err := filepath.Glob(filepath.Join(runid.BPFRoot, runid.Mark+"*", statsPinName))
	if err != nil {
		return nil, fmt.Errorf("list INT agents: %w", err)
	}
	var ids []runid.ID
	for _, p := range paths {
		name := filepath.Base(filepath.Dir(p))
		if id, err := runid.Parse(name[len(runid.Mark):]); err == nil {
			ids = append(ids, id)
		}
	}
	return ids, nil
}
