package health

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// cpuTimes are the jiffies of one /proc/stat cpu line. steal is the time
// the hypervisor ran something else while this CPU wanted to run: counted
// in busy and total too, since the CPU was not idle.
type cpuTimes struct{ busy, softirq, steal, total uint64 }

// readCPU returns the aggregate line and one entry per CPU.
func readCPU() (all cpuTimes, per []cpuTimes, err error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return all, nil, fmt.Errorf("cpu: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 || !strings.HasPrefix(fields[0], "cpu") {
			continue
		}
		var t cpuTimes
		for i, s := range fields[1:] {
			v, _ := strconv.ParseUint(s, 10, 64)
			if i >= 7 { // steal, guest, guest_nice: guest is counted in user already
				if i == 7 {
					t.busy += v
					t.steal += v
					t.total += v
				}
				continue
			}
			t.total += v
			if i != 3 && i != 4 { // idle, iowait
				t.busy += v
			}
			if i == 6 {
				t.softirq += v
			}
		}
		if fields[0] == "cpu" {
			all = t
		} else {
			per = append(per, t)
		}
	}
	return all, per, sc.Err()
}

func frac(a, b cpuTimes) float64 {
	if b.total <= a.total {
		return 0
	}
	return float64(b.busy-a.busy) / float64(b.total-a.total)
}

// stealFrac is the share of all CPU time the hypervisor took between a
// and b.
func stealFrac(a, b cpuTimes) float64 {
	if b.total <= a.total {
		return 0
	}
	return float64(b.steal-a.steal) / float64(b.total-a.total)
}

// softFrac is the share of all CPU time spent in softirq (packet
// processing, mostly) between a and b.
func softFrac(a, b cpuTimes) float64 {
	if b.total <= a.total {
		return 0
	}
	return float64(b.softirq-a.softirq) / float64(b.total-a.total)
}

// CPU summarises CPU use over the sampling windows.
type CPU struct {
	CPUs int `json:"cpus"`
	// MeanBusy is the whole run's busy share of all CPUs (0-1).
	MeanBusy float64 `json:"mean_busy"`
	// MaxBusy is the busiest window's share of all CPUs.
	MaxBusy float64 `json:"max_busy"`
	// PacketCPUs process packets (all when empty). SaturatedShare is the
	// share of windows in which they could not keep up: they spent at
	// least 90 % of their time in softirq (which preempts everything
	// else, so packet work was all they did), or a softirq run ended with
	// packets left over (time squeeze). BusyShare counts the windows in
	// which they were at least 95 % busy with anything (processes
	// included, which packet processing preempts).
	PacketCPUs     []int   `json:"packet_cpus,omitempty"`
	SaturatedShare float64 `json:"saturated_share"`
	BusyShare      float64 `json:"busy_share"`
	// PacketSoftirq is the packet CPUs' share of time in softirq, over the
	// run and in the busiest window.
	PacketSoftirq    float64 `json:"packet_softirq_share"`
	MaxPacketSoftirq float64 `json:"max_packet_softirq_share"`
	// Backlog is the packets waiting in the CPUs' input backlogs, sampled
	// once per window: the median and largest sample.
	BacklogMedian uint64 `json:"backlog_median_packets"`
	BacklogMax    uint64 `json:"backlog_max_packets"`
	// MaxOneCPU is the busiest single CPU in any window.
	MaxOneCPU float64 `json:"max_one_cpu"`
	// Softirq is the share of all CPU time spent in softirq, over the
	// run and in its busiest window: the kernel's packet processing.
	Softirq    float64 `json:"softirq_share"`
	MaxSoftirq float64 `json:"max_softirq_share"`
	// Stolen is the share of all CPU time the hypervisor gave to others
	// while these CPUs wanted to run, over the run; MaxStolenOneCPU the
	// largest share of one CPU in one window. A stolen millisecond is a
	// millisecond in which no packet, timer or delay line moved: on a
	// machine that is not its own, lateness follows.
	Stolen          float64 `json:"stolen_share"`
	MaxStolenOneCPU float64 `json:"max_stolen_share_one_cpu"`
	Windows         int     `json:"windows"`
}
