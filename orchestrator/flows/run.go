package flows

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// A Host is where flows start and end: its namespace and its address.
type Host struct {
	Netns string
	Addr  netip.Addr
}

// A Spec is one flow to run.
type Spec struct {
	ID    int
	Src   string // host names, keys of Options.Hosts
	Dst   string
	Size  uint64        // payload bytes; 0: long-lived, sends from Start until Stop
	Start time.Duration // after the workload's time zero
	Stop  time.Duration
	CC    string // TCP_CONGESTION of the sender's socket ("" keeps the default)
	Tool  string // "" runs the flow in-process; Iperf3 runs iperf3
}

// A Result is what happened to one flow.
type Result struct {
	ID      int
	SrcAddr netip.Addr
	DstAddr netip.Addr
	SrcPort uint16 // 0 when the flow never got a socket
	DstPort uint16
	Bytes   uint64 // payload bytes the receiver read
	StartNs int64  // CLOCK_MONOTONIC just before connect
	EndNs   int64  // CLOCK_MONOTONIC when the receiver read the last byte; 0 if failed
	Status  string // "ok" or "failed: <reason>"
}

// OK reports whether the flow completed.
func (r Result) OK() bool { return r.Status == "ok" }

// FCT is the flow completion time of a completed flow.
func (r Result) FCT() time.Duration { return time.Duration(r.EndNs - r.StartNs) }

// receiverCC is the congestion control dst's receiving sockets run: an
// ECN law (in echo) that any in-process flow to dst uses, else the
// namespace's default. Only a listener whose congestion control asks for
// ECN accepts the ECT SYN an ECN law sends (tcp_ecn_create_request), and
// its receivers echo each CE mark exactly; the ECN laws share that
// receiver, so with several the first by name serves them all. Senders
// that do not ask for ECN are not affected by it.
func receiverCC(specs []Spec, dst string, echo map[string]bool) string {
	cc := ""
	for _, s := range specs {
		if s.Dst != dst || s.Tool == Iperf3 || !echo[s.CC] {
			continue
		}
		if cc == "" || s.CC < cc {
			cc = s.CC
		}
	}
	return cc
}

// Options configure a Run.
type Options struct {
	// EchoCC are the congestion controls whose receivers must run one of
	// them: the ECN laws. Their senders' SYN is ECN-capable, which a
	// listener refuses ECN for unless its own congestion control needs
	// ECN: behind a default (cubic) receiver they get no ECN feedback at
	// all. Their receivers also echo each CE mark exactly (RFC 8257).
	EchoCC  map[string]bool
	Hosts   map[string]Host
	Port    uint16        // receivers listen here (default 5201)
	Timeout time.Duration // a flow not done this long after its start (or stop) fails (default 30s)
	// Progress, when set, is called after each flow ends with the count of
	// ended flows.
	Progress func(done, total int)
	// ZeroNs, when set, is the CLOCK_MONOTONIC time zero of the workload;
	// otherwise Run picks a few milliseconds from now.
	ZeroNs int64
	// Iperf3Dir receives iperf3's JSON report of each iperf3 flow.
	Iperf3Dir string
	// RecordPID is told every process started (iperf3), for cleanup.
	RecordPID func(pid int) error
	// Priority, when set, gives the SO_PRIORITY of flow id's sending
	// socket (in-process flows): which of its host NIC's queues it uses
	// (netbuild.NICClass).
	Priority func(id int) uint32
}

// prepareAhead is how long before its start a flow creates and binds its
// socket, so that the start itself is only connect().
const prepareAhead = 2 * time.Millisecond

type pendingFlow struct {
	spec     Spec
	deadline time.Time
	done     chan struct{} // closed by the receiver
	bytes    uint64
	endNs    int64
	err      error
}

type run struct {
	opt     Options
	buf     []byte // zeros the senders write (shared, read only)
	mu      sync.Mutex
	pending map[netip.AddrPort]*pendingFlow
	conns   map[net.Conn]struct{}
	closed  bool
	done    atomic.Int64
	total   int
	ctx     context.Context
	// iperfPort numbers the iperf3 servers' ports.
	iperfPort atomic.Uint32
}

// Run runs the flows and returns one result per spec, in spec order. A
// failed flow is a result, not an error; the error is for the run itself
// (a listener that cannot open, a cancelled context).
func Run(ctx context.Context, specs []Spec, opt Options) ([]Result, error) {
	if opt.Port == 0 {
		opt.Port = 5201
	}
	if opt.Timeout == 0 {
		opt.Timeout = 30 * time.Second
	}
	for _, s := range specs {
		if s.Tool != "" && s.Tool != Iperf3 {
			return nil, fmt.Errorf("flow %d: unknown tool %q", s.ID, s.Tool)
		}
		for _, h := range []string{s.Src, s.Dst} {
			if _, ok := opt.Hosts[h]; !ok {
				return nil, fmt.Errorf("flow %d: unknown host %q", s.ID, h)
			}
		}
	}
	if err := RaiseFileLimit(2*len(specs) + 256); err != nil {
		return nil, err
	}
	r := &run{
		opt:     opt,
		buf:     make([]byte, 256<<10),
		pending: map[netip.AddrPort]*pendingFlow{},
		conns:   map[net.Conn]struct{}{},
		total:   len(specs),
		ctx:     ctx,
	}
	var listeners []*net.TCPListener
	closeListeners := func() {
		for _, ln := range listeners {
			ln.Close()
		}
	}
	var acceptWG sync.WaitGroup
	seen := map[string]bool{}
	for _, s := range specs {
		if seen[s.Dst] || s.Tool == Iperf3 {
			continue
		}
		seen[s.Dst] = true
		h := opt.Hosts[s.Dst]
		ln, err := ListenCC(h.Netns, h.Addr, opt.Port, receiverCC(specs, s.Dst, opt.EchoCC))
		if err != nil {
			closeListeners()
			return nil, err
		}
		listeners = append(listeners, ln)
		acceptWG.Add(1)
		go func() {
			defer acceptWG.Done()
			r.accept(ln)
		}()
	}
	defer func() {
		closeListeners()
		acceptWG.Wait()
	}()

	// Cancellation cuts every open connection short.
	stopCancel := context.AfterFunc(ctx, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.closed = true
		for c := range r.conns {
			c.SetDeadline(time.Now())
		}
	})
	defer stopCancel()

	zero := opt.ZeroNs
	if zero == 0 {
		zero = Monotonic() + int64(5*time.Millisecond)
	}
	results := make([]Result, len(specs))
	order := make([]int, len(specs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return specs[order[a]].Start < specs[order[b]].Start })
	var wg sync.WaitGroup
	for _, i := range order {
		s := specs[i]
		if wait := time.Duration(zero + int64(s.Start-prepareAhead) - Monotonic()); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			results[i] = r.failed(s, "cancelled")
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if s.Tool == Iperf3 {
				results[i] = r.iperf3Flow(s, zero)
			} else {
				results[i] = r.flow(s, zero)
			}
			if !results[i].OK() && ctx.Err() != nil {
				// Cut short by the cancellation (its deadline reads
				// as a timeout): say so, not "timed out".
				results[i].Status = "failed: cancelled"
			}
			n := int(r.done.Add(1))
			if opt.Progress != nil {
				opt.Progress(n, r.total)
			}
		}()
	}
	wg.Wait()
	return results, ctx.Err()
}

func (r *run) failed(s Spec, why string) Result {
	return Result{ID: s.ID, SrcAddr: r.opt.Hosts[s.Src].Addr, DstAddr: r.opt.Hosts[s.Dst].Addr, Status: "failed: " + why}
}

func (r *run) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.conns[c] = struct{}{}
	return true
}

func (r *run) untrack(c net.Conn) {
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
}

// flow runs the sending side of one flow and collects the receiver's side.
func (r *run) flow(s Spec, zero int64) Result {
	src, dst := r.opt.Hosts[s.Src], r.opt.Hosts[s.Dst]
	res := r.failed(s, "")
	var prio uint32
	if r.opt.Priority != nil {
		prio = r.opt.Priority(s.ID)
	}
	sock, err := newClientSocket(src.Netns, src.Addr, s.CC, prio)
	if err != nil {
		res.Status += err.Error()
		return res
	}
	res.SrcPort, res.DstPort = sock.port, r.opt.Port
	key := netip.AddrPortFrom(src.Addr, sock.port)
	startAt := zero + int64(s.Start)
	end := s.Start
	if s.Size == 0 {
		end = s.Stop
	}
	deadline := time.Now().Add(time.Duration(zero + int64(end) + int64(r.opt.Timeout) - Monotonic()))
	p := &pendingFlow{spec: s, deadline: deadline, done: make(chan struct{})}
	r.mu.Lock()
	r.pending[key] = p
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.pending, key)
		r.mu.Unlock()
	}()

	if wait := time.Duration(startAt - Monotonic()); wait > 0 {
		time.Sleep(wait)
	}
	res.StartNs = Monotonic()
	conn, err := sock.connect(netip.AddrPortFrom(dst.Addr, r.opt.Port), deadline)
	if err != nil {
		res.Status += reason(err)
		return res
	}
	defer conn.Close()
	if !r.track(conn) {
		res.Status += "cancelled"
		return res
	}
	defer r.untrack(conn)
	if err := r.send(conn, s, zero, deadline); err != nil {
		if time.Now().After(deadline) {
			// The receiver gave up at the same deadline and closed.
			res.Status += "timed out"
		} else {
			res.Status += "send: " + reason(err)
		}
		return res
	}
	select {
	case <-p.done:
	case <-time.After(time.Until(deadline) + 100*time.Millisecond):
		res.Status += "timed out waiting for the receiver"
		return res
	}
	res.Bytes = p.bytes
	if p.err != nil {
		res.Status += p.err.Error()
		return res
	}
	res.EndNs, res.Status = p.endNs, "ok"
	return res
}

// send writes the flow's bytes (or until its stop time) and closes the
// sending direction so that the receiver sees the end of the stream.
func (r *run) send(c *net.TCPConn, s Spec, zero int64, deadline time.Time) error {
	if s.Size == 0 {
		stop := time.Now().Add(time.Duration(zero + int64(s.Stop) - Monotonic()))
		c.SetWriteDeadline(stop)
		for {
			if _, err := c.Write(r.buf); err != nil {
				if errors.Is(err, os.ErrDeadlineExceeded) && time.Now().Before(deadline) {
					return c.CloseWrite()
				}
				return err
			}
		}
	}
	c.SetWriteDeadline(deadline)
	left := s.Size
	for left > 0 {
		n := uint64(len(r.buf))
		if left < n {
			n = left
		}
		w, err := c.Write(r.buf[:n])
		left -= uint64(w)
		if err != nil {
			return err
		}
	}
	return c.CloseWrite()
}

func (r *run) accept(ln *net.TCPListener) {
	for {
		c, err := ln.AcceptTCP()
		if err != nil {
			return // closed
		}
		go r.receive(c)
	}
}

// receive reads one flow; it knows the flow from the sender's address and
// port, registered before connect.
func (r *run) receive(c *net.TCPConn) {
	defer c.Close()
	key := c.RemoteAddr().(*net.TCPAddr).AddrPort()
	key = netip.AddrPortFrom(key.Addr().Unmap(), key.Port())
	r.mu.Lock()
	p := r.pending[key]
	r.mu.Unlock()
	if p == nil || !r.track(c) {
		return // not one of ours, or cancelled
	}
	defer r.untrack(c)
	defer close(p.done)
	c.SetReadDeadline(p.deadline)
	buf := make([]byte, 64<<10)
	size := p.spec.Size
	for {
		n, err := c.Read(buf)
		if n > 0 {
			p.bytes += uint64(n)
			p.endNs = Monotonic()
			if size > 0 && p.bytes >= size {
				if p.bytes > size {
					p.err = fmt.Errorf("received %d bytes, more than the flow's %d", p.bytes, size)
				}
				return
			}
		}
		if err == io.EOF {
			if size > 0 {
				p.err = fmt.Errorf("short read: %d of %d bytes", p.bytes, size)
			} else if p.bytes == 0 {
				p.err = errors.New("long flow carried no data")
			}
			return
		}
		if err != nil {
			p.err = errors.New("receive: " + reason(err))
			return
		}
	}
}

// reason shortens an error to what flows.csv should say.
func reason(err error) string {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return "timed out"
	case errors.Is(err, net.ErrClosed):
		return "cancelled"
	}
	return err.Error()
}
