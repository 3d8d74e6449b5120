package delay_test

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"cclab/orchestrator/delay"
	"cclab/orchestrator/flows"
	"cclab/orchestrator/netbuild"
)

// A stream sends numbered probes at least gap apart (it never catches up,
// so two probes are never closer) until stopped.
type stream struct {
	stopc chan struct{}
	done  chan struct{}
	sent  int
	err   error
}

func startStream(src, dst flows.Host, port uint16, gap time.Duration) (*stream, error) {
	p, err := openProber(src, dst, port)
	if err != nil {
		return nil, err
	}
	s := &stream{stopc: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer p.close()
		for {
			select {
			case <-s.stopc:
				return
			default:
			}
			if s.err = p.send(s.sent); s.err != nil {
				<-s.stopc
				return
			}
			s.sent++
			time.Sleep(gap)
		}
	}()
	return s, nil
}

// stop returns how many probes were sent.
func (s *stream) stop() (int, error) {
	close(s.stopc)
	<-s.done
	return s.sent, s.err
}

// A crossing is a probe's way through s0: where it entered s0 and how
// long it took to reach its receiver, by kernel stamps (CLOCK_REALTIME).
type crossing struct {
	seq   int
	in    int64 // ns
	delay time.Duration
}

// A probeWatch taps where a host's probes enter the delayed path and where
// they reach their receiver. An AF_PACKET tap on an interface sees a
// packet as the interface receives it: under link placement that is after
// the link's delay. So under path placement a probe enters the path where
// it arrives at s0 (its whole delay is at the receiver's port); under link
// placement where its sender transmits it, before the sender's link.
type probeWatch struct{ in, out *tap }

func watchProbes(n *netbuild.Network, src, dst string, port uint16) (*probeWatch, error) {
	inNs, inIface, outgoing := n.Netns("s0"), src, false
	if n.Delay.Link() {
		inNs, inIface, outgoing = n.Netns(src), "eth0", true
	}
	in, err := startTap(inNs, inIface, port, outgoing)
	if err != nil {
		return nil, err
	}
	out, err := startTap(n.Netns(dst), "eth0", port, false)
	if err != nil {
		in.stop()
		return nil, err
	}
	return &probeWatch{in: in, out: out}, nil
}

// stop returns the probes that arrived, in arrival order, with how many
// arrived; an error if one arrived after a later one.
func (w *probeWatch) stop() ([]crossing, int, error) {
	ins, outs := byseq(w.in.stop()), w.out.stop()
	var cs []crossing
	last := -1
	for _, p := range outs {
		if p.seq <= last {
			return nil, 0, fmt.Errorf("probe %d arrived after probe %d: reordered", p.seq, last)
		}
		last = p.seq
		if t, ok := ins[p.seq]; ok {
			cs = append(cs, crossing{seq: p.seq, in: t, delay: time.Duration(p.at - t)})
		}
	}
	return cs, len(outs), nil
}

// entered selects the crossings that entered s0 within [from, to) (ns).
func entered(cs []crossing, from, to int64) []crossing {
	var out []crossing
	for _, c := range cs {
		if c.in >= from && c.in < to {
			out = append(out, c)
		}
	}
	return out
}

// checkDelay holds a phase's probes to the line's bars for delay d.
func checkDelay(name string, cs []crossing, d time.Duration) error {
	if len(cs) < 20 {
		return fmt.Errorf("%s: %d probes, too few to judge", name, len(cs))
	}
	errs := make([]time.Duration, len(cs))
	for i, c := range cs {
		errs[i] = c.delay - d
	}
	slices.Sort(errs)
	med, p99 := errs[len(errs)/2], errs[len(errs)*99/100]
	b50, b99 := lineBars(d)
	if med > b50 || med < -b50 || p99 > b99 {
		return fmt.Errorf("%s: %d probes, delay %v: error median %v (bar %v), p99 %v (bar %v)", name, len(cs), d, med, b50, p99, b99)
	}
	return nil
}

// A change is a Replace call's span in CLOCK_REALTIME ns, the clock of
// kernel stamps.
type change struct{ call, ret int64 }

func replaceAt(t *testing.T, srv *delay.Server, pl *delay.Placement) change {
	t.Helper()
	call := time.Now().UnixNano()
	if err := srv.Replace(pl); err != nil {
		t.Fatal(err)
	}
	return change{call: call, ret: time.Now().UnixNano()}
}

// placeStar is the placement of the probe star with one-way delay d.
func placeStar(t *testing.T, d time.Duration) *delay.Placement {
	t.Helper()
	pl, err := delay.Place(starPlan(t, d))
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// percentile returns the q-quantile of ds (sorted in place).
func percentile(ds []time.Duration, q float64) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[min(len(ds)-1, int(q*float64(len(ds))))]
}

// traffic crosses the probe star while delays change: a paced TCP flow and
// probes into h3, watched from where they enter s0.
type traffic struct {
	w    *probeWatch
	s    *stream
	load *paced
	tcp  func() (retr, ofo uint64)
}

// startTraffic starts probes from probeSrc to h3, gap apart, on UDP port
// port, and a TCP flow from tcpSrc to tcpDst paced at rate (bytes/s) on
// TCP port port.
func startTraffic(t *testing.T, n *netbuild.Network, probeSrc, tcpSrc, tcpDst string, port uint16, gap time.Duration, rate float64) *traffic {
	t.Helper()
	tcp, err := netOf(n, []string{tcpDst})
	if err != nil {
		t.Fatal(err)
	}
	w, err := watchProbes(n, probeSrc, "h3", port)
	if err != nil {
		t.Fatal(err)
	}
	load, err := startPaced(host(n, tcpSrc), host(n, tcpDst), port, rate)
	if err != nil {
		w.stop()
		t.Fatal(err)
	}
	s, err := startStream(host(n, probeSrc), host(n, "h3"), port, gap)
	if err != nil {
		load.stop()
		w.stop()
		t.Fatal(err)
	}
	return &traffic{w: w, s: s, load: load, tcp: tcp}
}

// stop ends the probes, waits linger for the line to empty, ends the flow
// and returns the probes' crossings. A probe or TCP segment out of order
// fails the test at once (never excused); lost probes are an error.
func (tr *traffic) stop(t *testing.T, linger time.Duration) ([]crossing, error) {
	t.Helper()
	sent, serr := tr.s.stop()
	time.Sleep(linger)
	tr.load.stop()
	cs, arrived, rerr := tr.w.stop()
	if rerr != nil {
		t.Fatal(rerr)
	}
	if _, ofo := tr.tcp(); ofo > 0 {
		t.Fatalf("the TCP flow's receiver queued %d segments out of order", ofo)
	}
	if serr != nil {
		return cs, serr
	}
	if arrived != sent {
		return cs, fmt.Errorf("%d probes sent, %d arrived", sent, arrived)
	}
	return cs, nil
}
