// Package cpuqueue measures the queue the CPUs add to every packet of an
// emulated fabric: the per-CPU input backlog that each veth crossing goes
// through before softirq processes it. No qdisc, INT record or link
// counter sees it, yet under load it delays packets as a configured queue
// would (DESIGN.md: ~270 us on a 1 Gbit/s fat-tree).
//
// The probe is a chain of namespaces outside the fabric with as many veth
// links as the fabric's longest path, carrying nothing but ICMP echoes
// while the workload runs. Its packets wait in the same backlogs as the
// fabric's, on every crossing a fabric packet makes, and in no queue of
// their own; so an echo's round trip above the idle one is the CPU queue
// that path's packets met (docs/fidelity.md).
package cpuqueue

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"cclab/internal/icmpecho"
	"cclab/internal/nsexec"
	"cclab/internal/runid"
)

// MaxLinks bounds the chain: its /30s fill 169.254.77.0/24, link-local,
// so they never meet a topology's addresses.
const MaxLinks = 63

// echoTimeout is how long an echo is waited for; a later one is lost.
const echoTimeout = 100 * time.Millisecond

// linkAddr is the address of end e (0: left, 1: right) of link i.
func linkAddr(i, e int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{169, 254, 77, byte(4*i + 1 + e)}), 30)
}

// Report is what the probe saw.
type Report struct {
	// Links is the chain's length: the fabric path it stands for has
	// Links-1 switches.
	Links int `json:"links"`
	// Idle is the echo RTT before the workload; Loaded during it.
	Idle   icmpecho.RTT `json:"idle_rtt"`
	Loaded icmpecho.RTT `json:"loaded_rtt"`
	// IntervalNs is the time between echoes.
	IntervalNs int64 `json:"interval_ns"`
	// QueueP50Ns and QueueP99Ns are the CPU queue of a round trip: the
	// loaded RTT's median and p99 above the idle median.
	QueueP50Ns int64 `json:"queue_p50_ns"`
	QueueP99Ns int64 `json:"queue_p99_ns"`
}

// A Probe is the chain and its pinger.
type Probe struct {
	names    []string // the chain's namespaces, source first
	links    int
	pinger   *icmpecho.Pinger
	interval time.Duration
	idle     icmpecho.RTT

	stop chan struct{}
	wg   sync.WaitGroup
	// written by the sampling goroutine, read after Stop
	samples []int64
	lost    int
	err     error
}

// Attach builds a chain of links veth links for run id: namespaces
// cpq0..cpqN with the run's prefix (they go with the run's, and `cclab
// clean` removes them), the inner ones forwarding.
func Attach(id runid.ID, links int) (*Probe, error) {
	if links < 1 || links > MaxLinks {
		return nil, fmt.Errorf("cpu queue probe: %d links, want 1 to %d", links, MaxLinks)
	}
	p := &Probe{links: links, interval: time.Millisecond}
	for i := 0; i <= links; i++ {
		p.names = append(p.names, id.Netns(fmt.Sprintf("cpq%d", i)))
	}
	for i, name := range p.names {
		if err := newNamespace(name, i > 0 && i < links); err != nil {
			return nil, fmt.Errorf("cpu queue probe: %w", err)
		}
	}
	for i := 0; i < links; i++ {
		if err := link(p.names[i], p.names[i+1], i); err != nil {
			return nil, fmt.Errorf("cpu queue probe link %d: %w", i, err)
		}
	}
	for i, name := range p.names {
		if err := nsexec.Do(name, func() error { return p.route(i) }); err != nil {
			return nil, fmt.Errorf("cpu queue probe routes in %s: %w", name, err)
		}
	}
	src, dst := linkAddr(0, 0).Addr(), linkAddr(links-1, 1).Addr()
	pg, err := icmpecho.New(p.names[0], src, dst, 0xc9a0)
	if err != nil {
		return nil, fmt.Errorf("cpu queue probe: %w", err)
	}
	p.pinger = pg
	return p, nil
}

// Namespaces are the chain's namespaces (to steer their packet work as
// the fabric's is).
func (p *Probe) Namespaces() []string { return p.names }

// newNamespace makes a named namespace with lo up, forwarding if asked.
func newNamespace(name string, forward bool) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer orig.Close()
		h, err := netns.NewNamed(name)
		if err == nil {
			h.Close()
			err = inside(forward)
		}
		// A thread that cannot return stays locked and dies with this
		// goroutine.
		if serr := netns.Set(orig); serr == nil {
			runtime.UnlockOSThread()
		} else if err == nil {
			err = serr
		}
		if err != nil {
			err = fmt.Errorf("namespace %s: %w", name, err)
		}
		errc <- err
	}()
	return <-errc
}

// inside configures the calling thread's new namespace.
func inside(forward bool) error {
	lo, err := netlink.LinkByName("lo")
	if err != nil {
		return err
	}
	if err := netlink.LinkSetUp(lo); err != nil {
		return err
	}
	if !forward {
		return nil
	}
	// /proc/sys/net is the namespace of the thread that opens it.
	fd, err := unix.Open("/proc/sys/net/ipv4/ip_forward", unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	_, err = unix.Write(fd, []byte("1"))
	return err
}

// link makes link i's veth pair, its left end in a, its right end in b,
// and addresses both.
func link(a, b string, i int) error {
	left, right := fmt.Sprintf("q%d-l", i), fmt.Sprintf("q%d-r", i)
	err := nsexec.Do(a, func() error {
		fb, err := netns.GetFromName(b)
		if err != nil {
			return fmt.Errorf("open %s: %w", b, err)
		}
		defer fb.Close()
		v := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: left, TxQLen: 1000}, PeerName: right, PeerNamespace: netlink.NsFd(fb)}
		if err := netlink.LinkAdd(v); err != nil {
			return fmt.Errorf("add veth: %w", err)
		}
		return up(left, linkAddr(i, 0))
	})
	if err != nil {
		return err
	}
	return nsexec.Do(b, func() error { return up(right, linkAddr(i, 1)) })
}

// route gives namespace i of the chain its routes: towards the far end
// by the right neighbour, everything else by the left one.
func (p *Probe) route(i int) error {
	add := func(dst netip.Prefix, gw netip.Addr) error {
		r := &netlink.Route{Dst: &net.IPNet{IP: dst.Addr().AsSlice(), Mask: net.CIDRMask(dst.Bits(), 32)}, Gw: gw.AsSlice()}
		if err := netlink.RouteAdd(r); err != nil {
			return fmt.Errorf("route %s via %s: %w", dst, gw, err)
		}
		return nil
	}
	far := netip.PrefixFrom(linkAddr(p.links-1, 1).Addr(), 32)
	near := netip.PrefixFrom(linkAddr(0, 0).Addr(), 32)
	if i < p.links-1 { // the right neighbour is not the far end itself
		if err := add(far, linkAddr(i, 1).Addr()); err != nil {
			return err
		}
	}
	if i > 1 {
		if err := add(near, linkAddr(i-1, 0).Addr()); err != nil {
			return err
		}
	}
	return nil
}

func up(name string, addr netip.Prefix) error {
	l, err := netlink.LinkByName(name)
	if err != nil {
		return err
	}
	ipn := &net.IPNet{IP: addr.Addr().AsSlice(), Mask: net.CIDRMask(addr.Bits(), 32)}
	if err := netlink.AddrAdd(l, &netlink.Addr{IPNet: ipn}); err != nil {
		return fmt.Errorf("address %s: %w", name, err)
	}
	if err := netlink.LinkSetUp(l); err != nil {
		return fmt.Errorf("up %s: %w", name, err)
	}
	return nil
}

// Idle measures the probe's round trip with nothing else running.
func (p *Probe) Idle(ctx context.Context, n int) error {
	// The first echoes resolve the neighbour; they are not samples.
	if err := p.pinger.Reach(ctx, echoTimeout, 3*time.Second); err != nil {
		return fmt.Errorf("cpu queue probe: %w", err)
	}
	r, err := p.pinger.Sample(ctx, n, 200*time.Microsecond, echoTimeout)
	if err != nil {
		return fmt.Errorf("cpu queue probe: %w", err)
	}
	if r.Samples == 0 {
		return fmt.Errorf("cpu queue probe: no echo came back (%d lost)", r.Lost)
	}
	p.idle = r
	return nil
}

// Start sends an echo every interval until Stop.
func (p *Probe) Start() {
	p.stop = make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			select {
			case <-p.stop:
				return
			default:
			}
			rtt, ok, err := p.pinger.One(echoTimeout)
			if err != nil {
				p.err = err
				return
			}
			if ok {
				p.samples = append(p.samples, rtt)
			} else {
				p.lost++
			}
			time.Sleep(p.interval)
		}
	}()
}

// Close ends the probing and closes the pinger; it may be called more
// than once, and after Stop (a run that fails early calls it).
func (p *Probe) Close() {
	if p.stop != nil {
		close(p.stop)
		p.wg.Wait()
		p.stop = nil
	}
	p.pinger.Close()
}

// Stop ends the probing, closes the pinger and reports. The chain stays
// until the run's namespaces go.
func (p *Probe) Stop() (Report, error) {
	p.Close()
	r := Report{Links: p.links, Idle: p.idle, Loaded: icmpecho.Summarise(p.samples, p.lost), IntervalNs: int64(p.interval)}
	if p.err != nil {
		return r, fmt.Errorf("cpu queue probe: %w", p.err)
	}
	// A lost echo waited at least the timeout: it ranks above every
	// sample.
	all := append([]int64(nil), p.samples...)
	for range p.lost {
		all = append(all, int64(echoTimeout))
	}
	if q := icmpecho.Summarise(all, 0); q.Samples > 0 {
		r.QueueP50Ns = max(0, q.P50Ns-r.Idle.P50Ns)
		r.QueueP99Ns = max(0, q.P99Ns-r.Idle.P50Ns)
	}
	return r, nil
}
