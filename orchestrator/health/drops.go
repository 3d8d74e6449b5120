package health

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Softnet is what the CPUs' packet backlogs did (/proc/net/softnet_stat,
// summed over CPUs).
type Softnet struct {
	// Dropped packets found their CPU's backlog full
	// (net.core.netdev_max_backlog): loss no configured buffer explains.
	Dropped uint64 `json:"dropped"`
	// TimeSqueeze counts softirq runs cut short with work left: the CPU
	// could not keep up with the packets for that long.
	TimeSqueeze uint64 `json:"time_squeeze"`
	// backlog is the packets waiting when it was read.
	backlog uint64
}

func (s Softnet) sub(o Softnet) Softnet {
	return Softnet{Dropped: s.Dropped - o.Dropped, TimeSqueeze: s.TimeSqueeze - o.TimeSqueeze}
}

func readSoftnet() (Softnet, error) {
	f, err := os.Open("/proc/net/softnet_stat")
	if err != nil {
		return Softnet{}, fmt.Errorf("softnet: %w", err)
	}
	defer f.Close()
	var s Softnet
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 3 {
			continue
		}
		d, err1 := strconv.ParseUint(fs[1], 16, 64)
		q, err2 := strconv.ParseUint(fs[2], 16, 64)
		if err1 != nil || err2 != nil {
			return Softnet{}, fmt.Errorf("softnet: parse %q", sc.Text())
		}
		s.Dropped += d
		s.TimeSqueeze += q
		if len(fs) >= 12 { // input + process queue length, Linux >= 5.10
			if b, err := strconv.ParseUint(fs[11], 16, 64); err == nil {
				s.backlog += b
			}
		}
	}
	return s, sc.Err()
}

// IfaceDrops is one interface's drops during the run.
type IfaceDrops struct {
	Netns string `json:"netns"`
	Iface string `json:"iface"`
	Drops uint64 `json:"drops"` // rx and tx drops of the device
}

// ifaceDrops reads the rx and tx drop counters of every interface of the
// namespaces, keyed "netns/iface".
func ifaceDrops(namespaces []string) (map[string]uint64, error) {
	out := map[string]uint64{}
	for _, ns := range namespaces {
		c, _, err := devCounters(ns)
		if err != nil {
			return nil, err
		}
		for ifc, v := range c {
			out[ns+"/"+ifc] = v.rxDrop + v.txDrop
		}
	}
	return out, nil
}

func dropsSince(before, after map[string]uint64) []IfaceDrops {
	var out []IfaceDrops
	for k, v := range after {
		if d := v - before[k]; v > before[k] && d > 0 {
			ns, ifc, _ := strings.Cut(k, "/")
			out = append(out, IfaceDrops{Netns: ns, Iface: ifc, Drops: d})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Netns != out[j].Netns {
			return out[i].Netns < out[j].Netns
		}
		return out[i].Iface < out[j].Iface
	})
	return out
}
