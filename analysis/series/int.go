package series

import (
	"sort"
	"time"

	"cclab/analysis/metrics"
	"cclab/tcopt"
)

// INTStats counts the INT options (tcopt/README.md) found in a capture.
type INTStats struct {
	Packets  uint64 `json:"packets"`  // segments carrying a well-formed option
	Forward  uint64 `json:"forward"`  // ... on data (E = 0)
	Echo     uint64 `json:"echo"`     // ... echoed on ACKs (E = 1)
	Invalid  uint64 `json:"invalid"`  // our kind and ExID but rejected whole
	Overflow uint64 `json:"overflow"` // a switch found no free slot
	Records  uint64 `json:"records"`  // valid hop records
	Ignored  uint64 `json:"ignored"`  // records with a rate code readers ignore
	QCN      uint64 `json:"qcn"`      // QCN feedback records (not hops)
}

type intKey struct {
	file int
	echo bool
	hop  int
}

// INT decodes the INT option of every segment and keeps, per capture,
// direction (forward or echo) and hop position, the largest queue length
// reported in each window. Memory grows with windows, not packets.
type INT struct {
	Stats []INTStats // per capture
	qlen  *Windows[intKey]
}

// NewINT starts an empty decoder for files captures.
func NewINT(files int, width time.Duration) *INT {
	return &INT{Stats: make([]INTStats, files), qlen: NewWindows[intKey](0, width)}
}

// Add decodes the TCP options of one segment of capture file at time t.
func (n *INT) Add(file int, t int64, tcpOptions []byte) {
	raw := tcopt.Find(tcpOptions)
	if raw == nil {
		return
	}
	st := &n.Stats[file]
	o, err := tcopt.Parse(raw)
	if err != nil {
		st.Invalid++
		return
	}
	st.Packets++
	if o.Echo {
		st.Echo++
	} else {
		st.Forward++
	}
	if o.Overflow {
		st.Overflow++
	}
	// Hop positions count valid hop records only: a QCN congestion
	// point's record sits in a slot of its own among them (a switch
	// writes it into an echo's free slot, tcopt/README.md).
	hop := 0
	for _, r := range o.Records {
		if _, ok := r.QCN(); ok {
			st.QCN++
			continue
		}
		h, ok := r.Hop()
		if !ok {
			st.Ignored++
			continue
		}
		st.Records++
		n.qlen.AddMax(intKey{file, o.Echo, hop}, t, uint64(h.Qlen))
		hop++
	}
}

// INTQueue is the queue length INT reported at one hop position.
type INTQueue struct {
	File    int             `json:"-"`
	Echo    bool            `json:"echo"`
	Hop     int             `json:"hop"`        // 0 = first switch port on the path
	Points  []metrics.Point `json:"-"`          // max qlen (bytes) per window, T on the capture clock
	Summary metrics.Summary `json:"qlen_bytes"` // of the per-window maxima
}

// Queues returns the per-hop series in capture, direction, hop order.
func (n *INT) Queues() []INTQueue {
	keys := n.qlen.Keys()
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.file != b.file {
			return a.file < b.file
		}
		if a.echo != b.echo {
			return !a.echo
		}
		return a.hop < b.hop
	})
	var out []INTQueue
	for _, k := range keys {
		pts := n.qlen.Values(k)
		vals := make([]float64, len(pts))
		for i, p := range pts {
			vals[i] = p.V
		}
		out = append(out, INTQueue{File: k.file, Echo: k.echo, Hop: k.hop, Points: pts, Summary: metrics.Summarize(vals)})
	}
	return out
}
