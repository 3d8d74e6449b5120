package series

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"time"

	"cclab/analysis/metrics"
	"cclab/rundir"
)

// readCSV opens path, checks its header has the columns in want and calls
// row for every record with a lookup of those columns. A missing file is
// os.ErrNotExist.
func readCSV(path string, want []string, row func(line int, field func(string) string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReaderSize(f, 1<<20))
	r.FieldsPerRecord = -1
	r.ReuseRecord = true // only the slice is reused: each record's strings are new
	hdr, err := r.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: empty file, want header %v", path, want)
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	col := make(map[string]int, len(hdr))
	for i, h := range hdr {
		col[h] = i
	}
	// The wanted columns are looked up by name once, not per field read.
	at := make([]int, len(want))
	for i, w := range want {
		c, ok := col[w]
		if !ok {
			return fmt.Errorf("%s: header %v has no column %q", path, hdr, w)
		}
		at[i] = c
	}
	hdr = slices.Clone(hdr) // the reader reuses its record
	for line := 2; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if len(rec) != len(hdr) {
			return fmt.Errorf("%s:%d: %d fields, header has %d", path, line, len(rec), len(hdr))
		}
		field := func(name string) string {
			for i, w := range want {
				if w == name {
					return rec[at[i]]
				}
			}
			panic("readCSV: column " + name + " is not among the wanted ones")
		}
		if err := row(line, field); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
}

func parseInt(name, s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q: not an integer", name, s)
	}
	return v, nil
}

// Port names a switch egress port.
type Port struct {
	Node  string `json:"node"`
	Iface string `json:"iface"`
}

func (p Port) String() string { return p.Node + "/" + p.Iface }

// Queue is one port's queue samples.
type Queue struct {
	Port    Port            `json:"port"`
	Samples []metrics.Point `json:"samples"` // T relative to the origin, V in bytes
	TxRate  []metrics.Point `json:"tx_rate"` // bit/s between consecutive samples
	Summary metrics.Summary `json:"qlen_bytes"`
}

// ReadQueues reads queues.csv; times (CLOCK_MONOTONIC) are shifted by
// offset onto the capture clock and made relative to origin.
func ReadQueues(path string, offset, origin int64) ([]Queue, error) {
	byPort := map[Port]*Queue{}
	lastTx := map[Port][2]int64{}
	err := readCSV(path, rundir.QueuesColumns, func(_ int, f func(string) string) error {
		t, err := parseInt("time_ns", f("time_ns"))
		if err != nil {
			return err
		}
		q, err := parseInt("qlen_bytes", f("qlen_bytes"))
		if err != nil {
			return err
		}
		tx, err := parseInt("tx_bytes", f("tx_bytes"))
		if err != nil {
			return err
		}
		p := Port{Node: f("node"), Iface: f("iface")}
		qq := byPort[p]
		if qq == nil {
			qq = &Queue{Port: p}
			byPort[p] = qq
		}
		rel := time.Duration(t + offset - origin)
		qq.Samples = append(qq.Samples, metrics.Point{T: rel, V: float64(q)})
		if prev, ok := lastTx[p]; ok && t > prev[0] && tx >= prev[1] {
			qq.TxRate = append(qq.TxRate, metrics.Point{T: rel, V: float64(tx-prev[1]) * 8 / (float64(t-prev[0]) / 1e9)})
		}
		lastTx[p] = [2]int64{t, tx}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]Queue, 0, len(byPort))
	for _, q := range byPort {
		vals := make([]float64, len(q.Samples))
		for i, s := range q.Samples {
			vals[i] = s.V
		}
		q.Summary = metrics.Summarize(vals)
		out = append(out, *q)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Port.String() < out[j].Port.String() })
	return out, nil
}

// CDF returns the empirical distribution of the values: (value, fraction
// of values <= it), one point per distinct value.
func CDF(values []float64) [][2]float64 {
	s := append([]float64(nil), values...)
	sort.Float64s(s)
	var out [][2]float64
	for i, v := range s {
		if i+1 < len(s) && s[i+1] == v {
			continue
		}
		out = append(out, [2]float64{v, float64(i+1) / float64(len(s))})
	}
	return out
}

// Trace is one socket's law trace.
type Trace struct {
	Sock       string          `json:"sock"`
	CC         string          `json:"cc"`
	SignalName string          `json:"signal_name"`
	Cwnd       []metrics.Point `json:"cwnd_bytes"`
	Pacing     []metrics.Point `json:"pacing_bps"` // rows of a paced socket only
	Signal     []metrics.Point `json:"signal"`     // in the law's fixed-point scale (kmod/law/README.md)
}

// ReadTraces reads cc_trace.csv, times shifted like ReadQueues.
func ReadTraces(path string, offset, origin int64) ([]Trace, error) {
	bySock := map[string]*Trace{}
	var order []string
	// The columns every cc_trace.csv has had (later ones are optional).
	err := readCSV(path, rundir.CCTraceColumns[:7], func(_ int, f func(string) string) error {
		t, err := parseInt("time_ns", f("time_ns"))
		if err != nil {
			return err
		}
		cw, err := parseInt("cwnd_bytes", f("cwnd_bytes"))
		if err != nil {
			return err
		}
		// Empty when the socket is not paced (docs/run-directory.md).
		var pace int64
		paced := f("pacing_bps") != ""
		if paced {
			if pace, err = parseInt("pacing_bps", f("pacing_bps")); err != nil {
				return err
			}
		}
		sig, err := parseInt("signal", f("signal"))
		if err != nil {
			return err
		}
		k := f("sock")
		tr := bySock[k]
		if tr == nil {
			tr = &Trace{Sock: k, CC: f("cc"), SignalName: f("signal_name")}
			bySock[k] = tr
			order = append(order, k)
		}
		rel := time.Duration(t + offset - origin)
		tr.Cwnd = append(tr.Cwnd, metrics.Point{T: rel, V: float64(cw)})
		if paced {
			tr.Pacing = append(tr.Pacing, metrics.Point{T: rel, V: float64(pace)})
		}
		tr.Signal = append(tr.Signal, metrics.Point{T: rel, V: float64(sig)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]Trace, 0, len(order))
	for _, k := range order {
		out = append(out, *bySock[k])
	}
	return out, nil
}
