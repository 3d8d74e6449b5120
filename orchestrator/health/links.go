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
	Node       string `json:"node"`
	Netns      string `json:"-"`
	Iface      string `json:"iface"`
	ConfigBps  uint64 `json:"configured_bps"`
	lastTx     uint64
	lastAt     time.Time
	sawCounter bool
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

// txBytes reads the transmitted bytes of every interface of a namespace
// from /proc/thread-self/net/dev, which shows the calling thread's
// namespace.
func txBytes(netns string) (map[string]uint64, error) {
	out := map[string]uint64{}
	err := nsexec.Do(netns, func() error {
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
			if len(f) < 9 {
				continue
			}
			v, err := strconv.ParseUint(f[8], 10, 64) // tx bytes
			if err != nil {
				return fmt.Errorf("parse %q: %w", sc.Text(), err)
			}
			out[strings.TrimSpace(name)] = v
		}
		return sc.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("link counters of %s: %w", netns, err)
	}
	return out, nil
}
