// Package series builds time series from a run: bytes per time window
// (throughput per flow, link utilisation), Jain's index over time among
// flows sharing a bottleneck, and the queue and law traces the run wrote.
package series

import (
	"math"
	"sort"
	"time"

	"cclab/analysis/metrics"
)

// Windows accumulates bytes per key in fixed windows of Width starting at
// Origin (ns). Memory grows with the windows a key is active in, not with
// packets.
type Windows[K comparable] struct {
	Origin int64
	Width  time.Duration
	bins   map[K][]bin
}

type bin struct {
	w     int64
	bytes uint64
}

// NewWindows starts an empty accumulator.
func NewWindows[K comparable](origin int64, width time.Duration) *Windows[K] {
	return &Windows[K]{Origin: origin, Width: width, bins: make(map[K][]bin)}
}

// Add counts n bytes for key at time t (ns). Times before Origin are
// dropped: they belong to nothing the run measured.
func (w *Windows[K]) Add(key K, t int64, n uint64) {
	if n == 0 || t < w.Origin {
		return
	}
	w.update(key, t, n, false)
}

// AddMax keeps the largest value seen in each window instead of a sum.
func (w *Windows[K]) AddMax(key K, t int64, v uint64) {
	if t < w.Origin {
		return
	}
	w.update(key, t, v, true)
}

func (w *Windows[K]) update(key K, t int64, n uint64, keepMax bool) {
	idx := (t - w.Origin) / int64(w.Width)
	bs := w.bins[key]
	// Captures are in time order, so the window is almost always the last.
	for i := len(bs) - 1; i >= 0; i-- {
		if bs[i].w == idx {
			if keepMax {
				bs[i].bytes = max(bs[i].bytes, n)
			} else {
				bs[i].bytes += n
			}
			return
		}
		if bs[i].w < idx {
			bs = append(bs, bin{})
			copy(bs[i+2:], bs[i+1:])
			bs[i+1] = bin{w: idx, bytes: n}
			w.bins[key] = bs
			return
		}
	}
	w.bins[key] = append([]bin{{w: idx, bytes: n}}, bs...)
}

// Coarsen returns the same bytes in windows factor times as wide (sums;
// for a Windows filled by Add). factor < 2 returns w itself.
func (w *Windows[K]) Coarsen(factor int) *Windows[K] {
	if factor < 2 {
		return w
	}
	c := NewWindows[K](w.Origin, w.Width*time.Duration(factor))
	f := int64(factor)
	for k, bs := range w.bins {
		var out []bin
		for _, b := range bs { // in window order: merged ones are adjacent
			idx := b.w / f
			if n := len(out); n > 0 && out[n-1].w == idx {
				out[n-1].bytes += b.bytes
			} else {
				out = append(out, bin{w: idx, bytes: b.bytes})
			}
		}
		c.bins[k] = out
	}
	return c
}

// Keys lists the keys that got bytes.
func (w *Windows[K]) Keys() []K {
	ks := make([]K, 0, len(w.bins))
	for k := range w.bins {
		ks = append(ks, k)
	}
	return ks
}

// Values returns the raw per-window values of key from first to last
// (windows without samples are left out), T relative to Origin.
func (w *Windows[K]) Values(key K) []metrics.Point {
	bs := w.bins[key]
	out := make([]metrics.Point, len(bs))
	for i, b := range bs {
		out[i] = metrics.Point{T: time.Duration(b.w) * w.Width, V: float64(b.bytes)}
	}
	return out
}

// Rate returns the rate in bit/s of key in every window from first to last
// (inclusive), zeros included, as points at each window's start relative
// to Origin.
func (w *Windows[K]) Rate(key K, first, last int64) []metrics.Point {
	bs := w.bins[key]
	out := make([]metrics.Point, 0, max(last-first+1, 0))
	j := sort.Search(len(bs), func(i int) bool { return bs[i].w >= first })
	for i := first; i <= last; i++ {
		var b uint64
		if j < len(bs) && bs[j].w == i {
			b = bs[j].bytes
			j++
		}
		out = append(out, metrics.Point{T: time.Duration(i) * w.Width, V: float64(b) * 8 / w.Width.Seconds()})
	}
	return out
}

// Span is the first and last window index in which key got bytes.
func (w *Windows[K]) Span(key K) (first, last int64, ok bool) {
	bs := w.bins[key]
	if len(bs) == 0 {
		return 0, 0, false
	}
	return bs[0].w, bs[len(bs)-1].w, true
}

// Index is the window holding time t (ns).
func (w *Windows[K]) Index(t int64) int64 { return (t - w.Origin) / int64(w.Width) }

// bytesAt is key's byte count in window i.
func (w *Windows[K]) bytesAt(key K, i int64) uint64 {
	bs := w.bins[key]
	j := sort.Search(len(bs), func(k int) bool { return bs[k].w >= i })
	if j < len(bs) && bs[j].w == i {
		return bs[j].bytes
	}
	return 0
}

// Interval is when a flow is active, ns on the capture clock.
type Interval struct{ Start, End int64 }

// JainPoint is the fairness index in one window among the flows active
// through the whole window.
type JainPoint struct {
	T     time.Duration `json:"t_ns"`
	Flows int           `json:"flows"`
	Index metrics.Num   `json:"index"` // NaN when no flow moved a byte
}

// Jain computes the index per window over the flows in group whose active
// interval covers the whole window; windows with fewer than two such flows
// are left out (one flow is trivially fair). It walks each flow's own
// windows once, so the work grows with flows x their duration, not with
// flows x the run's duration.
func Jain[K comparable](w *Windows[K], group map[K]Interval) []JainPoint {
	if len(group) == 0 {
		return nil
	}
	width := int64(w.Width)
	span := func(iv Interval) (first, last int64) {
		first = (iv.Start - w.Origin + width - 1) / width
		last = (iv.End-w.Origin)/width - 1
		return max(first, 0), last
	}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, iv := range group {
		f, l := span(iv)
		if f <= l {
			lo, hi = min(lo, f), max(hi, l)
		}
	}
	if lo > hi {
		return nil
	}
	n := hi - lo + 1
	count := make([]int32, n)
	sum := make([]float64, n)
	sq := make([]float64, n)
	for k, iv := range group {
		f, l := span(iv)
		for i := f; i <= l; i++ {
			count[i-lo]++
		}
		for _, b := range w.bins[k] {
			if b.w >= f && b.w <= l {
				x := float64(b.bytes)
				sum[b.w-lo] += x
				sq[b.w-lo] += x * x
			}
		}
	}
	var out []JainPoint
	for i := range n {
		if count[i] < 2 {
			continue
		}
		idx := math.NaN()
		if sq[i] > 0 {
			idx = sum[i] * sum[i] / (float64(count[i]) * sq[i])
		}
		out = append(out, JainPoint{T: time.Duration(lo+i) * w.Width, Flows: int(count[i]), Index: metrics.Num(idx)})
	}
	return out
}
