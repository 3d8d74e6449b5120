package cpucost

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// A Row is one stage's CPU time: per CPU, the share of that CPU's time
// (samples / (seconds x frequency)), and how much of it ran in softirq.
type Row struct {
	Stage   Stage     `json:"stage"`
	Share   []float64 `json:"cpu_share"`    // per CPU, 0..1 of the CPU's time
	Total   float64   `json:"total_share"`  // sum over CPUs, in CPUs (0..ncpu)
	Softirq float64   `json:"softirq_frac"` // of Total, the part in softirq context
	Samples int       `json:"samples"`
}

// A Breakdown is a profile's CPU time by stage.
type Breakdown struct {
	Seconds float64 `json:"seconds"`
	Hz      int     `json:"hz"`
	CPUs    int     `json:"cpus"`
	Samples int     `json:"samples"`
	Rows    []Row   `json:"rows"`
	// PacketShare is the stages of a packet's way summed, per CPU.
	PacketShare []float64 `json:"packet_cpu_share"`
}

// Accumulator counts classified samples.
type Accumulator struct {
	cpus       int
	n          map[Stage][]int
	soft       map[Stage]int
	first, end float64
	samples    int
}

// NewAccumulator counts samples of a machine with cpus CPUs.
func NewAccumulator(cpus int) *Accumulator {
	return &Accumulator{cpus: cpus, n: map[Stage][]int{}, soft: map[Stage]int{}}
}

// Add classifies one sample and counts it.
func (a *Accumulator) Add(s Sample) {
	if s.CPU < 0 || s.CPU >= a.cpus {
		return
	}
	st, soft := Classify(s)
	if a.n[st] == nil {
		a.n[st] = make([]int, a.cpus)
	}
	a.n[st][s.CPU]++
	if soft {
		a.soft[st]++
	}
	if a.samples == 0 || s.TimeS < a.first {
		a.first = s.TimeS
	}
	if s.TimeS > a.end {
		a.end = s.TimeS
	}
	a.samples++
}

// Breakdown turns the counts into shares of each CPU's time, for a
// profile taken at hz samples per second per CPU over seconds (0: the
// span of the samples).
func (a *Accumulator) Breakdown(hz int, seconds float64) Breakdown {
	if seconds <= 0 {
		seconds = a.end - a.first
	}
	b := Breakdown{Seconds: seconds, Hz: hz, CPUs: a.cpus, Samples: a.samples, PacketShare: make([]float64, a.cpus)}
	per := seconds * float64(hz)
	if per <= 0 {
		return b
	}
	for _, st := range Stages {
		c := a.n[st]
		if c == nil {
			continue
		}
		r := Row{Stage: st, Share: make([]float64, a.cpus)}
		for i, k := range c {
			r.Share[i] = float64(k) / per
			r.Total += r.Share[i]
			r.Samples += k
			if PacketStages[st] {
				b.PacketShare[i] += r.Share[i]
			}
		}
		r.Softirq = float64(a.soft[st]) / float64(r.Samples)
		b.Rows = append(b.Rows, r)
	}
	// perf's cpu-clock misses part of an idle CPU's time (no tick to
	// sample on in a halted vCPU), never a busy one's: idle is what the
	// busy stages leave.
	busy := b.BusyShare()
	idle := Row{Stage: StageIdle, Share: make([]float64, a.cpus), Samples: 0}
	for i := range idle.Share {
		idle.Share[i] = max(0, 1-busy[i])
		idle.Total += idle.Share[i]
	}
	if c := a.n[StageIdle]; c != nil {
		for _, k := range c {
			idle.Samples += k
		}
	}
	rows := b.Rows[:0]
	for _, r := range b.Rows {
		if r.Stage != StageIdle {
			rows = append(rows, r)
		}
	}
	b.Rows = append(rows, idle)
	return b
}

// Write prints the breakdown as a table, largest stage first (idle last).
func (b Breakdown) Write(w io.Writer) error {
	rows := append([]Row(nil), b.Rows...)
	sort.SliceStable(rows, func(i, j int) bool {
		if (rows[i].Stage == StageIdle) != (rows[j].Stage == StageIdle) {
			return rows[j].Stage == StageIdle
		}
		return rows[i].Total > rows[j].Total
	})
	tw := tabwriter.NewWriter(w, 2, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"stage"}
	for i := 0; i < b.CPUs; i++ {
		head = append(head, fmt.Sprintf("CPU %d %%", i))
	}
	head = append(head, "softirq %", "")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range rows {
		cells := []string{string(r.Stage)}
		for _, s := range r.Share {
			cells = append(cells, fmt.Sprintf("%.1f", 100*s))
		}
		cells = append(cells, fmt.Sprintf("%.0f", 100*r.Softirq), "")
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	cells := []string{"packet's way, summed"}
	for _, s := range b.PacketShare {
		cells = append(cells, fmt.Sprintf("%.1f", 100*s))
	}
	fmt.Fprintln(tw, strings.Join(append(cells, "", ""), "\t"))
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d samples at %d Hz per CPU over %.2f s\n", b.Samples, b.Hz, b.Seconds)
	return err
}
