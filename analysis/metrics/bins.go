package metrics

import (
	"fmt"
	"sort"
)

// Sample is one finished flow: its size and FCT slowdown.
type Sample struct {
	Size     uint64  `json:"size_bytes"`
	Slowdown float64 `json:"slowdown"`
}

// PowerTCPEdges are the upper edges (bytes) of the size bins of the
// PowerTCP evaluation, as its FCT figures bin flows by size.
var PowerTCPEdges = []uint64{
	5_000, 10_000, 20_000, 30_000, 50_000, 75_000, 100_000, 200_000, 400_000,
	600_000, 800_000, 1_000_000, 5_000_000, 10_000_000, 30_000_000,
}

// Bin is the slowdown summary of the flows whose size is in (Low, High].
type Bin struct {
	Label   string  `json:"label"`
	Low     uint64  `json:"low_bytes"`  // exclusive
	High    uint64  `json:"high_bytes"` // inclusive
	Summary Summary `json:"slowdown"`
}

// FixedBins groups samples by size into the bins ending at edges (sorted
// ascending); sizes above the last edge go into a last, open bin. Empty
// bins are kept so tables of different runs line up.
func FixedBins(samples []Sample, edges []uint64) []Bin {
	groups := make([][]float64, len(edges)+1)
	for _, s := range samples {
		i := sort.Search(len(edges), func(i int) bool { return edges[i] >= s.Size })
		groups[i] = append(groups[i], s.Slowdown)
	}
	var out []Bin
	var low uint64
	for i, g := range groups {
		b := Bin{Low: low, Summary: Summarize(g)}
		if i < len(edges) {
			b.High = edges[i]
			b.Label = "<=" + SizeLabel(edges[i])
			low = edges[i]
		} else {
			if len(g) == 0 {
				continue
			}
			b.High = ^uint64(0)
			b.Label = ">" + SizeLabel(low)
		}
		out = append(out, b)
	}
	return out
}

// EqualCountBins sorts samples by size and cuts them into bins of pct % of
// the flows each (HPCC's analysis uses 5 %): bin i holds the flows ranked
// [i*n/k, (i+1)*n/k) with k = 100/pct. A bin's High is its largest size.
func EqualCountBins(samples []Sample, pct float64) []Bin {
	s := append([]Sample(nil), samples...)
	sort.SliceStable(s, func(i, j int) bool { return s[i].Size < s[j].Size })
	k := int(100/pct + 0.5)
	n := len(s)
	var out []Bin
	var low uint64
	for i := range k {
		lo, hi := i*n/k, (i+1)*n/k
		if hi == lo {
			continue
		}
		vals := make([]float64, 0, hi-lo)
		for _, x := range s[lo:hi] {
			vals = append(vals, x.Slowdown)
		}
		high := s[hi-1].Size
		out = append(out, Bin{
			Label:   fmt.Sprintf("%g-%g%% (<=%s)", float64(i)*pct, float64(i+1)*pct, SizeLabel(high)),
			Low:     low,
			High:    high,
			Summary: Summarize(vals),
		})
		low = high
	}
	return out
}

// SizeLabel writes bytes as the papers do: 5K, 1M (decimal units).
func SizeLabel(b uint64) string {
	switch {
	case b >= 1_000_000 && b%100_000 == 0:
		return fmt.Sprintf("%gM", float64(b)/1e6)
	case b >= 1_000 && b%100 == 0:
		return fmt.Sprintf("%gK", float64(b)/1e3)
	}
	return fmt.Sprintf("%dB", b)
}

// Classes are the short and long flow thresholds. PowerTCP reports short
// flows below 10 KB; long flows are those of 1 MB and more.
type Classes struct {
	ShortBelow  uint64 `json:"short_below_bytes"`
	LongAtLeast uint64 `json:"long_at_least_bytes"`
}

// DefaultClasses are the PowerTCP paper's thresholds.
var DefaultClasses = Classes{ShortBelow: 10_000, LongAtLeast: 1_000_000}

// ShortLong summarises the slowdowns of all, short and long flows.
type ShortLong struct {
	All   Summary `json:"all"`
	Short Summary `json:"short"`
	Long  Summary `json:"long"`
}

// SplitShortLong summarises samples by class.
func SplitShortLong(samples []Sample, c Classes) ShortLong {
	var all, short, long []float64
	for _, s := range samples {
		all = append(all, s.Slowdown)
		if s.Size < c.ShortBelow {
			short = append(short, s.Slowdown)
		}
		if s.Size >= c.LongAtLeast {
			long = append(long, s.Slowdown)
		}
	}
	return ShortLong{All: Summarize(all), Short: Summarize(short), Long: Summarize(long)}
}
