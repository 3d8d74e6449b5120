package lawload

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// A law that does not pace (DCTCP) keeps the kernel's pacing-rate
// estimate, as the kernel's own DCTCP does, so TCP small queues hold its
// host's NIC queue to about a millisecond of its rate. cong_control makes
// the kernel skip tcp_update_pacing_rate(); before the glue set the
// estimate itself the rate stayed unlimited and one DCTCP socket filled
// the whole 1 MB host queue, 80 ms at 100 Mbit/s, where no switch marks.
// The sender's own NIC is the bottleneck here (100 Mbit/s, 1 MB FIFO), as
// a lone flow's is on the default fabric; kernel cubic is the reference.
func TestUnpacedLawKeepsTheKernelsPacingRate(t *testing.T) {
	r := loadForTest(t, "dctcp")
	for _, cc := range []string{"cubic", r.Name} {
		t.Run(cc, func(t *testing.T) {
			n := newTestNet(t, 1000, 4<<20, true)
			run(t, "tc", "-n", n.a, "qdisc", "add", "dev", "va", "root", "handle", "1:", "htb", "default", "1")
			run(t, "tc", "-n", n.a, "class", "add", "dev", "va", "parent", "1:", "classid", "1:1", "htb",
				"rate", "100mbit", "ceil", "100mbit", "burst", "64k", "cburst", "64k")
			run(t, "tc", "-n", n.a, "qdisc", "add", "dev", "va", "parent", "1:1", "handle", "10:", "bfifo", "limit", "1000000")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var backlogs []int
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					if b, err := backlog(n.a, "va"); err == nil {
						backlogs = append(backlogs, b)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}()
			flows := n.flows(t, ctx, cc, 1, 0, 1500*time.Millisecond)
			cancel()
			wg.Wait()
			f := flows[0]
			// Past the first RTTs: every sample's rate against the
			// window over the RTT (x1.2-2 in the kernel's rule).
			var ratios []float64
			for _, s := range f.samples {
				if s.at < 300*time.Millisecond || s.rttUs == 0 || s.cwnd == 0 {
					continue
				}
				if s.pacing == ^uint64(0) {
					t.Fatalf("%s: pacing rate unlimited at %v (cwnd %d, rtt %d us)", cc, s.at, s.cwnd, s.rttUs)
				}
				ratios = append(ratios, float64(s.pacing)/(float64(s.cwnd)*float64(s.mss)/(float64(s.rttUs)/1e6)))
			}
			slices.Sort(backlogs)
			slices.Sort(ratios)
			// (Each backlog sample forks tc: a loaded machine takes fewer.)
			if len(ratios) < 50 || len(backlogs) < 30 {
				t.Fatalf("%s: %d rate samples, %d backlog samples", cc, len(ratios), len(backlogs))
			}
			med := ratios[len(ratios)/2]
			p99 := backlogs[len(backlogs)*99/100]
			t.Logf("%s: pacing rate / (cwnd x mss / srtt) median %.2f; host NIC queue median %d B, p99 %d B, max %d B",
				cc, med, backlogs[len(backlogs)/2], p99, backlogs[len(backlogs)-1])
			if med < 1.1 || med > 2.1 {
				t.Errorf("%s: pacing rate is %.2f x the window over the RTT, want the kernel's 1.2-2", cc, med)
			}
			// TSQ's limit, max(two skbs, ~1 ms of 1.2-2x 100 Mbit/s),
			// checked before each skb is queued: up to three GSO skbs
			// (204 KB seen at p99 for DCTCP, 103 KB for cubic); unlimited,
			// 480-680 KB and rising to the 1 MB buffer.
			if p99 > 300_000 {
				t.Errorf("%s: the host NIC queue held %d B at p99: TCP small queues did not hold the socket back", cc, p99)
			}
		})
	}
}

var backlogRE = regexp.MustCompile(`backlog (\d+)b`)

// backlog reads the bytes queued in a device's qdiscs (the root's count).
func backlog(ns, dev string) (int, error) {
	out, err := exec.Command("tc", "-n", ns, "-s", "qdisc", "show", "dev", dev).Output()
	if err != nil {
		return 0, fmt.Errorf("tc qdisc show %s: %w", dev, err)
	}
	m := backlogRE.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("no backlog in %q", out)
	}
	return strconv.Atoi(string(m[1]))
}
