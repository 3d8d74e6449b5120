// Package cpustat reads the CPUs' time from /proc/stat: how busy they
// were, in softirq (the kernel's packet processing) and stolen by the
// hypervisor, between two readings. orchestrator/health judges runs with
// it; internal/quiettest judges timing tests.
package cpustat

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Times are the jiffies of one /proc/stat cpu line. Steal is the time
// the hypervisor ran something else while this CPU wanted to run: counted
// in Busy and Total too, since the CPU was not idle.
type Times struct{ Busy, Softirq, Steal, Total uint64 }

// Add is the sum of two CPUs' times.
func (t Times) Add(o Times) Times {
	return Times{t.Busy + o.Busy, t.Softirq + o.Softirq, t.Steal + o.Steal, t.Total + o.Total}
}

// Read returns the aggregate line and one entry per CPU.
func Read() (all Times, per []Times, err error) {
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
		var t Times
		for i, s := range fields[1:] {
			v, _ := strconv.ParseUint(s, 10, 64)
			if i >= 7 { // steal, guest, guest_nice: guest is counted in user already
				if i == 7 {
					t.Busy += v
					t.Steal += v
					t.Total += v
				}
				continue
			}
			t.Total += v
			if i != 3 && i != 4 { // idle, iowait
				t.Busy += v
			}
			if i == 6 {
				t.Softirq += v
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

// BusyShare is the share of all CPU time that was busy between a and b.
func BusyShare(a, b Times) float64 {
	if b.Total <= a.Total {
		return 0
	}
	return float64(b.Busy-a.Busy) / float64(b.Total-a.Total)
}

// StealShare is the share of all CPU time the hypervisor took between a
// and b.
func StealShare(a, b Times) float64 {
	if b.Total <= a.Total {
		return 0
	}
	return float64(b.Steal-a.Steal) / float64(b.Total-a.Total)
}

// SoftirqShare is the share of all CPU time spent in softirq (packet
// processing, mostly) between a and b.
func SoftirqShare(a, b Times) float64 {
	if b.Total <= a.Total {
		return 0
	}
	return float64(b.Softirq-a.Softirq) / float64(b.Total-a.Total)
}
