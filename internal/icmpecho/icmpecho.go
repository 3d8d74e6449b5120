// Package icmpecho times ICMP echoes by the kernel's receive timestamp: the
// round trip of a path and the two kernels, as TCP's own RTT samples see
// it, without either side's application scheduling (the remote kernel
// answers an echo in softirq).
package icmpecho

import (
	"context"
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"cclab/internal/nsexec"
)

// RTT summarises round-trip samples in nanoseconds.
type RTT struct {
	Samples int   `json:"samples"`
	Lost    int   `json:"lost"`
	MinNs   int64 `json:"min_ns"`
	P10Ns   int64 `json:"p10_ns"`
	P50Ns   int64 `json:"p50_ns"`
	P90Ns   int64 `json:"p90_ns"`
	P99Ns   int64 `json:"p99_ns"`
}

// Summarise sorts s and summarises it.
func Summarise(s []int64, lost int) RTT {
	if len(s) == 0 {
		return RTT{Lost: lost}
	}
	slices.Sort(s)
	at := func(p float64) int64 { return s[min(len(s)-1, int(p*float64(len(s))))] }
	return RTT{Samples: len(s), Lost: lost, MinNs: s[0], P10Ns: at(.10), P50Ns: at(.50), P90Ns: at(.90), P99Ns: at(.99)}
}

// A Pinger sends ICMP echo requests from one namespace and address to
// another address and times the replies.
type Pinger struct {
	fd       int
	src, dst netip.Addr
	id       uint16
	seq      uint16
}

// New opens a raw ICMP socket in namespace ns bound to src; id tells its
// echoes from other pingers'.
func New(ns string, src, dst netip.Addr, id uint16) (*Pinger, error) {
	p := &Pinger{fd: -1, src: src, dst: dst, id: id}
	err := nsexec.Do(ns, func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_ICMP)
		if err != nil {
			return fmt.Errorf("icmp socket: %w", err)
		}
		p.fd = fd
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("icmp echo in %s: %w", ns, err)
	}
	if err := unix.SetsockoptInt(p.fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		p.Close()
		return nil, fmt.Errorf("icmp echo: SO_TIMESTAMPNS: %w", err)
	}
	if err := unix.Bind(p.fd, &unix.SockaddrInet4{Addr: src.As4()}); err != nil {
		p.Close()
		return nil, fmt.Errorf("icmp echo: bind %s: %w", src, err)
	}
	return p, nil
}

// Close closes the socket.
func (p *Pinger) Close() {
	if p.fd >= 0 {
		unix.Close(p.fd)
		p.fd = -1
	}
}

func icmpChecksum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

// One sends an echo request and returns its RTT, or ok false when no reply
// came within timeout.
func (p *Pinger) One(timeout time.Duration) (rtt int64, ok bool, err error) {
	sent, err := p.send()
	if err != nil {
		return 0, false, err
	}
	deadline := time.Now().Add(timeout)
	buf := make([]byte, 1500)
	oob := make([]byte, 64)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return 0, false, nil
		}
		pfd := []unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(pfd, int(left.Milliseconds())+1); err != nil && err != unix.EINTR {
			return 0, false, fmt.Errorf("ping %s: %w", p.dst, err)
		}
		n, oobn, _, _, err := unix.Recvmsg(p.fd, buf, oob, unix.MSG_DONTWAIT)
		if err == unix.EAGAIN || err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, false, fmt.Errorf("ping %s: %w", p.dst, err)
		}
		if !p.isReply(buf[:n]) {
			continue
		}
		stamp := rxStamp(oob[:oobn])
		if stamp == 0 {
			stamp = realtime()
		}
		return stamp - sent, true, nil
	}
}

// isReply checks an IPv4 packet for the reply to our last request.
func (p *Pinger) isReply(b []byte) bool {
	seq, ok := p.replySeq(b)
	return ok && seq == p.seq
}

func rxStamp(oob []byte) int64 {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return 0
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SO_TIMESTAMPNS && len(m.Data) >= 16 {
			sec := int64(binary.NativeEndian.Uint64(m.Data[0:]))
			nsec := int64(binary.NativeEndian.Uint64(m.Data[8:]))
			return sec*1e9 + nsec
		}
	}
	return 0
}

func realtime() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_REALTIME, &ts)
	return ts.Nano()
}

// Sample takes n RTT samples, gap apart; a lost echo counts as lost, not
// as a sample.
func (p *Pinger) Sample(ctx context.Context, n int, gap, timeout time.Duration) (RTT, error) {
	var s []int64
	lost := 0
	for i := 0; i < n && ctx.Err() == nil; i++ {
		rtt, ok, err := p.One(timeout)
		if err != nil {
			return RTT{}, err
		}
		if ok {
			s = append(s, rtt)
		} else {
			lost++
		}
		time.Sleep(gap)
	}
	if err := ctx.Err(); err != nil {
		return RTT{}, err
	}
	return Summarise(s, lost), nil
}

// Reach sends echoes until one is answered, each given retry to come back,
// and fails after within: the first packets to a fresh neighbour wait for
// its ARP resolution, and a lost ARP request is retried only after the
// neighbour table's retrans_time (1 s by default), so a measurement that
// starts before the path answers would count a second of losses that are
// not the path's.
func (p *Pinger) Reach(ctx context.Context, retry, within time.Duration) error {
	deadline := time.Now().Add(within)
	tries := 0
	for ctx.Err() == nil && time.Now().Before(deadline) {
		tries++
		_, ok, err := p.One(retry)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return fmt.Errorf("ping %s: no echo answered in %v (%d sent)", p.dst, within, tries)
}
