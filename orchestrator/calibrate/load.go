package calibrate

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"cclab/internal/nsexec"
	"cclab/orchestrator/flows"
)

// A load is one TCP flow paced below the path's bottleneck rate: it keeps
// the CPUs as busy as a flow at that rate does, without a standing queue.
type load struct {
	conn     net.Conn
	received atomic.Int64 // bytes the receiver has read so far
	start    time.Time
	wg       sync.WaitGroup
}

// startLoad starts a flow from src to dst paced at rate bytes per second
// (SO_MAX_PACING_RATE: the kernel's own TCP pacing, without fq).
func startLoad(ctx context.Context, src, dst flows.Host, port uint16, rate uint64) (*load, error) {
	ln, err := flows.Listen(dst.Netns, dst.Addr, port)
	if err != nil {
		return nil, err
	}
	l := &load{}
	accepted := make(chan error, 1)
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer ln.Close()
		ln.SetDeadline(time.Now().Add(10 * time.Second))
		c, err := ln.Accept()
		accepted <- err
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 256<<10)
		for {
			n, err := c.Read(buf)
			l.received.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
	err = nsexec.Do(src.Netns, func() error {
		d := net.Dialer{
			Timeout:   5 * time.Second,
			LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(src.Addr, 0)),
			Control: func(_, _ string, rc syscall.RawConn) error {
				var serr error
				err := rc.Control(func(fd uintptr) {
					serr = unix.SetsockoptUint64(int(fd), unix.SOL_SOCKET, unix.SO_MAX_PACING_RATE, rate)
				})
				if err != nil {
					return err
				}
				return serr
			},
		}
		var err error
		l.conn, err = d.DialContext(ctx, "tcp4", netip.AddrPortFrom(dst.Addr, port).String())
		return err
	})
	if err != nil {
		ln.Close()
		l.wg.Wait()
		return nil, fmt.Errorf("calibration load %s -> %s: %w", src.Addr, dst.Addr, err)
	}
	if err := <-accepted; err != nil {
		l.conn.Close()
		l.wg.Wait()
		return nil, fmt.Errorf("calibration load: accept: %w", err)
	}
	l.start = time.Now()
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		buf := make([]byte, 256<<10)
		for {
			if _, err := l.conn.Write(buf); err != nil {
				return
			}
		}
	}()
	return l, nil
}

// tcpRTT is the sender's smoothed RTT as its TCP stack has it
// (TCP_INFO tcpi_rtt): the RTT the laws' own samples see, with the
// host's serialisation of each GSO packet and the receiver's ACK policy
// in it, which an ICMP echo has not.
func (l *load) tcpRTT() (time.Duration, error) {
	tc, ok := l.conn.(*net.TCPConn)
	if !ok {
		return 0, fmt.Errorf("calibration load: not a TCP connection")
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var info *unix.TCPInfo
	var serr error
	if err := rc.Control(func(fd uintptr) { info, serr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) }); err != nil {
		return 0, err
	}
	if serr != nil {
		return 0, serr
	}
	return time.Duration(info.Rtt) * time.Microsecond, nil
}

// sampleTCPRTT reads tcpRTT every gap until done closes, and returns the
// median of what it read.
func (l *load) sampleTCPRTT(gap time.Duration, done <-chan struct{}) (int64, error) {
	var s []int64
	for {
		select {
		case <-done:
			if len(s) == 0 {
				return 0, fmt.Errorf("calibration load: no TCP RTT read")
			}
			slices.Sort(s)
			return s[len(s)/2], nil
		case <-time.After(gap):
		}
		r, err := l.tcpRTT()
		if err != nil {
			return 0, err
		}
		if r > 0 {
			s = append(s, int64(r))
		}
	}
}

// stop ends the flow and returns the rate the receiver got until now, bits
// per second: what the sender's buffer still holds drains after the close
// and is not counted.
func (l *load) stop() uint64 {
	secs := time.Since(l.start).Seconds()
	n := l.received.Load()
	l.conn.Close()
	l.wg.Wait()
	if secs <= 0 {
		return 0
	}
	return uint64(float64(n) * 8 / secs)
}
