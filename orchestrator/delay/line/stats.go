package line

import "time"

// Stats is what the line did.
type Stats struct {
	// Late is send time minus due time (kernel stamp + delay) per packet:
	// the error the line adds to a delay. Lag is read time minus kernel
	// stamp: how long packets waited for the thread (harmless below the
	// delay).
	Late, Lag       Histogram
	MaxLate, MaxLag time.Duration
	UnknownSrc      uint64 // packets of no class, sent at once
	BadFrames       uint64 // not IPv4 or truncated, sent at once
	NoStamp         uint64 // no kernel timestamp: the read time was used
	Wakeups         uint64
	TimerWakeups    uint64
	Spin            time.Duration // spinning before due times
	Margin          time.Duration // the adapted spin margin
	CPUTime         time.Duration // the thread's CPU time
	Running         time.Duration
	CPU             int       // pinned CPU, -1 none
	RTPriority      int       // SCHED_FIFO priority granted, 0 none
	Updates         uint64    // Update calls applied
	LastUpdate      time.Time // when the thread applied the last: packets it read since have its delays
	Ports           []PortStats
}

// PortStats is one port's classes: those it has now (Line.Update may
// change them), and what the classes before the last update counted, their
// packets sent since included.
type PortStats struct {
	Name    string
	Classes []ClassStats
	Earlier ClassStats
}

// ClassStats counts one (port, class).
type ClassStats struct {
	Delay                time.Duration // the class's delay (0 in Earlier)
	Packets, Bytes, Sent uint64
	BufferDrops          uint64 // the FIFO was full: loss the line caused
	QueueDrops           uint64 // the port's queue refused the packet: a real drop
	SendErrors           uint64
	Inversions           uint64 // kernel stamps out of order (the FIFO kept arrival order)
	MaxBytes             uint64 // high-water mark of the FIFOs its packets went into
	// HeldForOrder counts packets due later than stamp + delay: after an
	// update shortened their source's delay, they waited for its packets
	// held under the longer one.
	HeldForOrder uint64
}

// Totals sums every class of every port, earlier classes included.
func (s Stats) Totals() ClassStats {
	var t ClassStats
	for _, p := range s.Ports {
		for _, c := range p.Classes {
			t.add(c)
		}
		t.add(p.Earlier)
	}
	return t
}

func (t *ClassStats) add(c ClassStats) {
	t.Packets += c.Packets
	t.Bytes += c.Bytes
	t.Sent += c.Sent
	t.BufferDrops += c.BufferDrops
	t.QueueDrops += c.QueueDrops
	t.SendErrors += c.SendErrors
	t.Inversions += c.Inversions
	t.MaxBytes = max(t.MaxBytes, c.MaxBytes)
	t.HeldForOrder += c.HeldForOrder
}

// Histogram counts durations in 1 us buckets; the last bucket holds
// everything longer.
type Histogram struct {
	Counts []uint64
	Total  uint64
}

// Quantile returns the q-quantile (0..1) rounded up to the bucket's upper
// edge, so it never understates; 0 for an empty histogram.
func (h Histogram) Quantile(q float64) time.Duration {
	if h.Total == 0 {
		return 0
	}
	want := uint64(q*float64(h.Total) + 0.5)
	want = max(1, min(want, h.Total))
	var n uint64
	for i, c := range h.Counts {
		n += c
		if n >= want {
			return time.Duration(i+1) * time.Microsecond
		}
	}
	return time.Duration(len(h.Counts)) * time.Microsecond
}

// Sub returns the counts added since an earlier reading of the same line.
func (h Histogram) Sub(earlier Histogram) Histogram {
	out := Histogram{Counts: make([]uint64, len(h.Counts))}
	for i := range h.Counts {
		v := h.Counts[i]
		if i < len(earlier.Counts) {
			v -= earlier.Counts[i]
		}
		out.Counts[i] = v
		out.Total += v
	}
	return out
}
