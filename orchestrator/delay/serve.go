package delay

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"cclab/internal/cpustat"
	"cclab/internal/nsexec"
	"cclab/orchestrator/delay/line"
)

// ServeOptions configure the line that serves a placement.
type ServeOptions struct {
	// Netns returns the namespace of a node.
	Netns func(node string) string
	// CPU pins the line's thread; -1 picks the machine's last CPU.
	CPU int
	// RTPriority is the thread's SCHED_FIFO priority (0 takes 50).
	RTPriority int
	// Steer lists namespaces whose packet processing is steered (RPS) to
	// the CPUs other than the line's, so that softirq work does not hold
	// the line up; nil steers nothing.
	Steer []string
}

// Tolerance is the lateness the line may accept to spin less: half the
// median-lateness bound of docs/fidelity.md (5 % of a delay + 10 us) for
// the smallest delay it applies (classes of no delay, after a Replace,
// aside). The wakeups it saves cost CPU time the packets need more.
func Tolerance(pl *Placement) time.Duration {
	var least time.Duration
	for _, p := range pl.Ports {
		for _, d := range p.Classes {
			if d > 0 && (least == 0 || d < least) {
				least = d
			}
		}
	}
	return least/40 + 5*time.Microsecond
}

// A Server is a running delay line for a placement.
type Server struct {
	mu      sync.Mutex // pl and Replace
	pl      *Placement // what the line serves now
	l       *line.Line
	fds     []int
	start   time.Time
	cpu     int
	steered bool
}

// PacketCPUs are the CPUs left to packet processing: all but the line's
// when the namespaces were steered off it, nil (all) otherwise.
func (s *Server) PacketCPUs() []int {
	if s == nil || !s.steered {
		return nil
	}
	var out []int
	for _, c := range cpustat.AllowedOrAll() {
		if c != s.cpu {
			out = append(out, c)
		}
	}
	return out
}

// LineCPU is the CPU the line's thread is pinned to, -1 without a line.
func (s *Server) LineCPU() int {
	if s == nil || s.l == nil {
		return -1
	}
	return s.cpu
}

// socketBuffer is each socket's buffer: far above what a port's queue and
// a class's delay hold, so that sockets never limit the line.
const socketBuffer = 64 << 20

// Serve opens the sockets of every port of pl (the sink to read, the port
// to write) inside their namespaces and starts the line. Plumb must have
// built pl with the line engine.
func Serve(ctx context.Context, pl *Placement, opt ServeOptions) (_ *Server, err error) {
	if pl.Empty() {
		return nil, fmt.Errorf("delay line: nothing to serve")
	}
	s := &Server{start: time.Now(), pl: pl}
	defer func() {
		if err != nil {
			s.closeFDs()
		}
	}()
	cfg := line.Config{CPU: opt.CPU, RTPriority: opt.RTPriority, Tolerance: Tolerance(pl)}
	allowed := cpustat.AllowedOrAll()
	if cfg.CPU < 0 {
		cfg.CPU = allowed[len(allowed)-1] // the last CPU this process may use (its cpuset's)
	}
	if cfg.RTPriority == 0 {
		cfg.RTPriority = 50
	}
	idx := sinkIndex(pl)
	for i, p := range pl.Ports {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sink, peer := Sink(idx[i])
		// Path placement sends into the port's queue; link placement on
		// the sink's peer, whence delay_inject has the port receive it.
		out := p.Iface
		if pl.Link() {
			out = peer
		}
		var rx, tx int
		err := nsexec.Do(opt.Netns(p.Node), func() error {
			var err error
			if rx, err = sinkSocket(sink); err != nil {
				return err
			}
			s.fds = append(s.fds, rx)
			if tx, err = portSocket(out); err != nil {
				return err
			}
			s.fds = append(s.fds, tx)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("delay line on %s: %w", p.Name(), err)
		}
		cfg.Ports = append(cfg.Ports, line.Port{Name: p.Name(), RxFD: rx, TxFD: tx, Sources: p.Sources, Classes: lineClasses(p)})
	}
	s.cpu = cfg.CPU
	if len(opt.Steer) > 0 && len(allowed) > 1 {
		if err := Steer(opt.Steer, cfg.CPU); err != nil {
			return nil, err
		}
		s.steered = true
	}
	if s.l, err = line.Start(cfg); err != nil {
		return nil, err
	}
	return s, nil
}

func lineClasses(p PortPlan) []line.Class {
	out := make([]line.Class, len(p.Classes))
	for k, d := range p.Classes {
		out[k] = line.Class{Delay: d, Buffer: p.Buffers[k]}
	}
	return out
}

// Placement is what the line serves now: the placement it was started
// with, or the last one Replace put in force (with its classes of no
// delay). It is shared: do not modify it.
func (s *Server) Placement() *Placement {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pl
}

// Stats reports on the line so far.
func (s *Server) Stats() line.Stats { return s.l.Stats() }

// Stop stops the line (packets it still holds are dropped), closes its
// sockets and returns its final statistics.
func (s *Server) Stop() line.Stats {
	st := s.l.Stop()
	s.closeFDs()
	return st
}

func (s *Server) closeFDs() {
	for _, fd := range s.fds {
		unix.Close(fd)
	}
	s.fds = nil
}

// sinkSocket receives what the take program sends into the sink, with
// virtio-net headers (GSO packets stay whole) and kernel timestamps.
func sinkSocket(sink string) (int, error) {
	ifc, err := net.InterfaceByName(sink)
	if err != nil {
		return -1, fmt.Errorf("sink %s: %w", sink, err)
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
	if err != nil {
		return -1, fmt.Errorf("sink socket: %w", err)
	}
	for _, o := range [][3]int{
		{unix.SOL_PACKET, unix.PACKET_VNET_HDR, 1},
		{unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1},
		{unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, socketBuffer},
	} {
		if err := unix.SetsockoptInt(fd, o[0], o[1], o[2]); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("sink socket option %d: %w", o[1], err)
		}
	}
	// Only what the sink transmits is the line's: under link placement
	// the line's own sends arrive on the sink too, and the kernel drops
	// them here instead of copying each into the socket.
	if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, outgoingOnly()); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("sink socket filter: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifc.Index}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bind sink socket to %s: %w", sink, err)
	}
	return fd, nil
}

// portSocket sends delayed packets back out of a device, marked so that
// the take program lets them pass: the port itself (path placement: into
// its queue) or the sink's peer (link placement: to be received by the
// port); it receives nothing.
func portSocket(port string) (int, error) {
	ifc, err := net.InterfaceByName(port)
	if err != nil {
		return -1, fmt.Errorf("port %s: %w", port, err)
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("port socket: %w", err)
	}
	for _, o := range [][3]int{
		{unix.SOL_PACKET, unix.PACKET_VNET_HDR, 1},
		{unix.SOL_SOCKET, unix.SO_MARK, Mark},
		{unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, socketBuffer},
	} {
		if err := unix.SetsockoptInt(fd, o[0], o[1], o[2]); err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("port socket option %d: %w", o[1], err)
		}
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Ifindex: ifc.Index}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bind port socket to %s: %w", port, err)
	}
	return fd, nil
}

// outgoingOnly is a classic BPF socket filter that keeps the frames a
// device transmits (pkt_type PACKET_OUTGOING) and drops the rest.
func outgoingOnly() *unix.SockFprog {
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_B | unix.BPF_ABS, K: skfAdOff + skfAdPktType},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 1, K: unix.PACKET_OUTGOING},
		{Code: unix.BPF_RET | unix.BPF_K, K: 0xffffffff},
		{Code: unix.BPF_RET | unix.BPF_K, K: 0},
	}
	return &unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
}

// Classic BPF's ancillary load of the packet type (linux/filter.h:
// SKF_AD_OFF is -0x1000, as an unsigned 32-bit offset).
const (
	skfAdOff     = 0xfffff000
	skfAdPktType = 4
)

func htons(v uint16) uint16 { return v<<8 | v>>8 }
