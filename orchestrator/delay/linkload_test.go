package delay_test

import (
	"fmt"
	"testing"
	"time"

	"cclab/internal/cpustat"
	"cclab/internal/quiettest"
	"cclab/orchestrator/delay/line"
	"cclab/orchestrator/netbuild"
	"cclab/topology"
)

// Under load, each link's line class holds about the link's bytes in
// flight: a flow paced at 90 % of 200 Mbit/s through h0 - s0 - s1 - h1
// with 10 ms links fills every class on its way (s0/h0, s1/s0, h1/eth0) to
// at least 80 % of 0.9 x R x d and at most what an HTB port may put on a
// wire in d (R x d, its burst netbuild.HTBBurst and one 64 KB GSO packet
// beyond its tokens) plus R x 2 ms: packets the packet CPU held back
// during a stall reach the sink together and are stamped together (on
// this shared machine, under others' tests, 500 Mbit/s classes held up to
// 300 KB above R x d). The line's lateness stays within its bars for d.
// Path placement carries the same flow with the whole path's delay at
// s1/h1.
func TestLinkPlacementLoad(t *testing.T) {
	const (
		d    = 10 * time.Millisecond
		rate = 200e6
	)
	inFlight := uint64(rate / 8 * d.Seconds())
	for _, placement := range []string{topology.PlacePath, topology.PlaceLink} {
		t.Run(placement, func(t *testing.T) {
			quiettest.Retry(t, quiettest.Policy{Failures: 2, Tries: 4}, func(int) error {
				r, err := loadLine(t, placement, rate, d)
				if err != nil {
					return err
				}
				st, goodput := r.st, r.goodput
				p50, p99 := st.Late.Quantile(.5), st.Late.Quantile(.99)
				r.log(t, placement)
				if goodput < 0.85*0.9*rate {
					return fmt.Errorf("goodput %.0f Mbit/s, paced at %.0f", goodput/1e6, 0.9*rate/1e6)
				}
				tot := st.Totals()
				if tot.BufferDrops+tot.SendErrors+tot.QueueDrops > 0 {
					return fmt.Errorf("line lost packets: %+v", tot)
				}
				pathDelay := d
				if placement == topology.PlacePath {
					pathDelay = 3 * d
				}
				if b50, b99 := lineBars(pathDelay); p50 > b50 || p99 > b99 {
					return fmt.Errorf("lateness p50 %v p99 %v, bars %v / %v", p50, p99, b50, b99)
				}
				if placement != topology.PlaceLink {
					return nil
				}
				for _, name := range []string{"s0/h0", "s1/s0", "h1/eth0"} {
					c, ok := classOf(st, name)
					if !ok {
						t.Fatalf("no line port %s", name)
					}
					stall := uint64(rate / 8 * 0.002)
					low, high := uint64(0.8*0.9*float64(inFlight)), inFlight+netbuild.HTBBurst+line.MinBuffer/2+stall
					if c.MaxBytes < low || c.MaxBytes > high {
						t.Errorf("%s held up to %d B, want %d to %d (R x d = %d B)", name, c.MaxBytes, low, high, inFlight)
					}
				}
				return nil
			})
		})
	}
}

// What the line costs per Gbit of goodput, link placement against path
// placement on the same flow, paced at 90 % of 200 Mbit/s through
// h0 - s0 - s1 - h1 with 1 ms links (below what saturates the packet CPU
// here): the line's CPU time, and the packet CPUs' busy and softirq time
// (docs/performance.md, "Link placement"). Link placement passes every
// packet through the line once per link, three times instead of once, so
// its line costs more per Gbit; its lateness stays within the bars.
func TestLinkPlacementCost(t *testing.T) {
	const d = time.Millisecond
	var line [2]float64
	for i, placement := range []string{topology.PlacePath, topology.PlaceLink} {
		r, err := loadLine(t, placement, 200e6, d)
		if err != nil {
			t.Fatal(err)
		}
		r.log(t, placement)
		line[i] = r.lineCPU / r.gbit()
		b50, b99 := lineBars(d)
		if p50, p99 := r.st.Late.Quantile(.5), r.st.Late.Quantile(.99); p50 > b50 || p99 > b99 {
			t.Errorf("%s: lateness p50 %v p99 %v, bars %v / %v", placement, p50, p99, b50, b99)
		}
	}
	if line[1] <= line[0] {
		t.Errorf("the line costs %.2f s per Gbit under link placement, %.2f under path placement: it should pass each packet more often", line[1], line[0])
	}
}

// A load is a paced flow's measure: the line's statistics, the goodput,
// and the busy and softirq seconds of the packet CPUs (all but the
// line's) above what they spent in as long without the flow just before
// (other work on the machine varies meanwhile).
type load struct {
	st            line.Stats
	lineCPU       float64 // the line's CPU seconds in the window
	goodput       float64 // bit/s
	secs          float64
	busy, softirq float64
}

func (r load) gbit() float64 { return r.goodput * r.secs / 1e9 }

func (r load) log(t *testing.T, placement string) {
	t.Helper()
	g := r.gbit()
	t.Logf("%s: goodput %.0f Mbit/s; line %.2f s CPU per Gbit of goodput (%.0f%% of its core), %d packets, lateness p50 %v p99 %v; packet CPUs busy %.2f s, softirq %.2f s per Gbit above idle",
		placement, r.goodput/1e6, r.lineCPU/g, 100*r.lineCPU/r.secs, r.st.Totals().Packets,
		r.st.Late.Quantile(.5), r.st.Late.Quantile(.99), r.busy/g, r.softirq/g)
	for _, ps := range r.st.Ports {
		for _, c := range ps.Classes {
			t.Logf("  %s class %v: %d packets, max held %d B", ps.Name, c.Delay, c.Packets, c.MaxBytes)
		}
	}
}

// loadLine runs a flow paced at 90 % of rate through h0 - s0 - s1 - h1
// (links of delay d) for 3 s after a second's ramp.
func loadLine(t *testing.T, placement string, rate float64, d time.Duration) (load, error) {
	r := load{secs: 3}
	n, srv := upPlan(t, linePlan(t, fmt.Sprintf("%.0fMbit", rate/1e6), d, placement))
	// The packet CPUs' time without the flow, over as long as the flow
	// is measured: what others on the machine take meanwhile.
	idleBusy, idleSoftirq, err := packetCPUTime(srv.PacketCPUs(), r.secs)
	if err != nil {
		return r, err
	}
	f, err := startPaced(host(n, "h0"), host(n, "h1"), 7105, 0.9*rate/8)
	if err != nil {
		return r, err
	}
	defer f.stop()
	time.Sleep(time.Second)
	b0, l0 := f.received(), srv.Stats()
	busy, softirq, err := packetCPUTime(srv.PacketCPUs(), r.secs)
	if err != nil {
		return r, err
	}
	b1 := f.received()
	r.st = srv.Stats()
	r.lineCPU = (r.st.CPUTime - l0.CPUTime).Seconds()
	r.busy, r.softirq = busy-idleBusy, softirq-idleSoftirq
	r.goodput = float64(b1-b0) * 8 / r.secs
	return r, nil
}

// packetCPUTime waits secs and returns the busy and softirq seconds the
// CPUs spent meanwhile.
func packetCPUTime(cpus []int, secs float64) (busy, softirq float64, err error) {
	_, c0, err := cpustat.Read()
	if err != nil {
		return 0, 0, err
	}
	time.Sleep(time.Duration(secs * float64(time.Second)))
	_, c1, err := cpustat.Read()
	if err != nil {
		return 0, 0, err
	}
	for _, c := range cpus {
		busy += float64(c1[c].Busy-c0[c].Busy) / 100 // USER_HZ ticks
		softirq += float64(c1[c].Softirq-c0[c].Softirq) / 100
	}
	return busy, softirq, nil
}

// classOf is the only class of a line port (link placement).
func classOf(st line.Stats, port string) (line.ClassStats, bool) {
	for _, ps := range st.Ports {
		if ps.Name == port && len(ps.Classes) == 1 {
			return ps.Classes[0], true
		}
	}
	return line.ClassStats{}, false
}
