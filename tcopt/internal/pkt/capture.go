package pkt

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Frame is one captured Ethernet frame.
type Frame struct {
	Time     time.Time
	Data     []byte // from the Ethernet header on, up to the snap length
	Len      int    // length on the wire
	Outgoing bool
}

// Capture records the frames of one interface (both directions) through an
// AF_PACKET socket. Open it in the interface's network namespace.
type Capture struct {
	fd     int
	mu     sync.Mutex
	frames []Frame
	done   chan struct{}
	stop   chan struct{}
	err    error  // why the capture ended early
	drops  uint32 // frames the kernel dropped for want of buffer
}

// Listen starts capturing on ifname in the calling thread's namespace,
// keeping snap bytes of each frame.
func Listen(ifname string, snap int) (*Capture, error) {
	ifi, err := net.InterfaceByName(ifname)
	if err != nil {
		return nil, fmt.Errorf("capture %s: %w", ifname, err)
	}
	proto := htons(unix.ETH_P_ALL)
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(proto))
	if err != nil {
		return nil, fmt.Errorf("capture %s: socket: %w", ifname, err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: proto, Ifindex: ifi.Index}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("capture %s: bind: %w", ifname, err)
	}
	tv := unix.Timeval{Usec: 50000}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("capture %s: timeout: %w", ifname, err)
	}
	// Room for bursts while the reader competes for the CPU.
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 256<<20); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("capture %s: buffer: %w", ifname, err)
	}
	c := &Capture{fd: fd, done: make(chan struct{}), stop: make(chan struct{})}
	go c.loop(snap)
	return c, nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func (c *Capture) loop(snap int) {
	defer close(c.done)
	buf := make([]byte, 65536+64)
	stopping := false
	for {
		flags := unix.MSG_TRUNC
		if !stopping {
			select {
			case <-c.stop:
				// Drain what the kernel already queued, then stop.
				stopping = true
			default:
			}
		}
		if stopping {
			flags |= unix.MSG_DONTWAIT
		}
		n, from, err := unix.Recvfrom(c.fd, buf, flags)
		if err != nil {
			if errors.Is(err, unix.EAGAIN) && stopping {
				return
			}
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
				continue
			}
			c.mu.Lock()
			c.err = fmt.Errorf("capture: %w", err)
			c.mu.Unlock()
			return
		}
		keep := n
		if keep > snap {
			keep = snap
		}
		if keep > len(buf) {
			keep = len(buf)
		}
		ll, _ := from.(*unix.SockaddrLinklayer)
		f := Frame{Time: time.Now(), Data: append([]byte(nil), buf[:keep]...), Len: n,
			Outgoing: ll != nil && ll.Pkttype == unix.PACKET_OUTGOING}
		c.mu.Lock()
		c.frames = append(c.frames, f)
		c.mu.Unlock()
	}
}

// Frames returns what was captured so far.
func (c *Capture) Frames() []Frame {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Frame(nil), c.frames...)
}

// Wait returns once cond holds on the frames captured, or ctx ends.
func (c *Capture) Wait(ctx context.Context, cond func([]Frame) bool) error {
	for {
		if cond(c.Frames()) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Close stops the capture.
func (c *Capture) Close() {
	select {
	case <-c.stop:
		return
	default:
	}
	close(c.stop)
	<-c.done
	// Reading the statistics resets them: read once, at the end.
	if st, err := unix.GetsockoptTpacketStats(c.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS); err == nil {
		c.mu.Lock()
		c.drops = st.Drops
		c.mu.Unlock()
	}
	unix.Close(c.fd)
}

// Err is why the capture stopped before Close, if it did.
func (c *Capture) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Drops is the number of frames the kernel could not queue to the
// capture (known after Close): a busy machine loses some.
func (c *Capture) Drops() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return int(c.drops)
}

// IP returns the IPv4 packet inside an Ethernet frame, or nil.
func (f Frame) IP() []byte {
	if len(f.Data) < 14 || f.Data[12] != 0x08 || f.Data[13] != 0x00 {
		return nil
	}
	return f.Data[14:]
}
