package health

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"cclab/internal/nsexec"
)

// A LinkEnd is the egress of one interface: what it should carry at most.
type LinkEnd struct {
	Node      string `json:"node"`
	Netns     string `json:"-"`
	Iface     string `json:"iface"`
	ConfigBps uint64 `json:"configured_bps"`
	lastTx    uint64
	lastAt    time.Time
	// lastUncertainty is how far lastAt may be off.
	lastUncertainty time.Duration
	sawCounter      bool
}

// LinkRate is what one egress achieved.
type LinkRate struct {
	Node      string  `json:"node"`
	Iface     string  `json:"iface"`
	ConfigBps uint64  `json:"configured_bps"`
	PeakBps   uint64  `json:"peak_bps"` // busiest sampling window
	MeanBps   uint64  `json:"mean_bps"` // over the whole run
	Ratio     float64 `json:"peak_ratio"`
	TxBytes   uint64  `json:"tx_bytes"`
}

// readTime is when counters were read, give or take uncertainty.
type readTime struct {
	at          time.Time
	uncertainty time.Duration
}

// devCounter is one interface's line of /proc/net/dev.
type devCounter struct{ txBytes, rxDrop, txDrop uint64 }

// devCounters reads every interface's counters of a namespace from
// /proc/thread-self/net/dev, which shows the calling thread's namespace,
// and the time it read them: the middle of the read, and its uncertainty
// (half the read's duration: a thread preempted mid-read on a busy
// machine does not know when in that time the counters were taken).
func devCounters(netns string) (map[string]devCounter, readTime, error) {
	out := map[string]devCounter{}
	var at readTime
	err := nsexec.Do(netns, func() error {
		t0 := time.Now()
		defer func() {
			d := time.Since(t0)
			at = readTime{at: t0.Add(d / 2), uncertainty: d / 2}
		}()
		f, err := os.Open("/proc/thread-self/net/dev")
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			name, rest, ok := strings.Cut(sc.Text(), ":")
			if !ok {
				continue
			}
			f := strings.Fields(rest)
			if len(f) < 12 {
				continue
			}
			// rx: bytes packets errs drop ...; tx from field 8: bytes packets errs drop
			var v [3]uint64
			for i, col := range []int{8, 3, 11} {
				if v[i], err = strconv.ParseUint(f[col], 10, 64); err != nil {
					return fmt.Errorf("parse %q: %w", sc.Text(), err)
				}
			}
			out[strings.TrimSpace(name)] = devCounter{txBytes: v[0], rxDrop: v[1], txDrop: v[2]}
		}
		return sc.Err()
	})
	if err != nil {
		return nil, at, fmt.Errorf("link counters of %s: %w", netns, err)
	}
	return out, at, nil
}
