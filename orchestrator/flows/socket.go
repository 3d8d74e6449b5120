package flows

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"

	"cclab/internal/nsexec"

	"golang.org/x/sys/unix"
)

// Listen opens a TCP listener on addr:port inside namespace ns.
func Listen(ns string, addr netip.Addr, port uint16) (*net.TCPListener, error) {
	return ListenCC(ns, addr, port, "")
}

// ListenCC is Listen with the accepted sockets running congestion control
// cc ("" keeps the namespace's default).
func ListenCC(ns string, addr netip.Addr, port uint16, cc string) (*net.TCPListener, error) {
	var lc net.ListenConfig
	if cc != "" {
		lc.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			if err := c.Control(func(fd uintptr) {
				serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, cc)
			}); err != nil {
				return err
			}
			if serr != nil {
				return fmt.Errorf("set congestion control %q: %w", cc, serr)
			}
			return nil
		}
	}
	var ln net.Listener
	err := nsexec.Do(ns, func() error {
		var err error
		ln, err = lc.Listen(context.Background(), "tcp4", netip.AddrPortFrom(addr, port).String())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listen %s:%d in %s: %w", addr, port, ns, err)
	}
	return ln.(*net.TCPListener), nil
}

// clientSocket is a non-blocking TCP socket created in a namespace, bound to
// a local address with a kernel-chosen port and set to a congestion control.
type clientSocket struct {
	fd   int
	port uint16
}

func newClientSocket(ns string, src netip.Addr, cc string, prio uint32) (*clientSocket, error) {
	s := &clientSocket{fd: -1}
	err := nsexec.Do(ns, func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("socket: %w", err)
		}
		s.fd = fd
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("client socket in %s: %w", ns, err)
	}
	if err := s.setup(src, cc, prio); err != nil {
		unix.Close(s.fd)
		return nil, err
	}
	return s, nil
}

func (s *clientSocket) setup(src netip.Addr, cc string, prio uint32) error {
	if cc != "" {
		if err := unix.SetsockoptString(s.fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION, cc); err != nil {
			return fmt.Errorf("set congestion control %q: %w", cc, err)
		}
	}
	if prio != 0 {
		if err := unix.SetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_PRIORITY, int(prio)); err != nil {
			return fmt.Errorf("SO_PRIORITY %#x: %w", prio, err)
		}
	}
	if err := unix.SetsockoptInt(s.fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1); err != nil {
		return fmt.Errorf("TCP_NODELAY: %w", err)
	}
	if err := unix.Bind(s.fd, &unix.SockaddrInet4{Addr: src.As4()}); err != nil {
		return fmt.Errorf("bind %s: %w", src, err)
	}
	sa, err := unix.Getsockname(s.fd)
	if err != nil {
		return fmt.Errorf("getsockname: %w", err)
	}
	s.port = uint16(sa.(*unix.SockaddrInet4).Port)
	return nil
}

// connect starts a non-blocking connect and waits for it through the
// netpoller until deadline; it returns the connection, which owns the fd.
func (s *clientSocket) connect(dst netip.AddrPort, deadline time.Time) (*net.TCPConn, error) {
	err := unix.Connect(s.fd, &unix.SockaddrInet4{Addr: dst.Addr().As4(), Port: int(dst.Port())})
	if err != nil && err != unix.EINPROGRESS {
		unix.Close(s.fd)
		return nil, fmt.Errorf("connect %s: %w", dst, err)
	}
	f := os.NewFile(uintptr(s.fd), "flow")
	defer f.Close() // FileConn dups it
	if err != nil {
		if err := f.SetWriteDeadline(deadline); err != nil {
			return nil, fmt.Errorf("connect %s: %w", dst, err)
		}
		rc, err := f.SyscallConn()
		if err != nil {
			return nil, fmt.Errorf("connect %s: %w", dst, err)
		}
		var soErr int
		werr := rc.Write(func(fd uintptr) bool {
			soErr, err = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_ERROR)
			if err != nil || soErr != 0 {
				return true
			}
			// Still in progress: wait for writability.
			_, perr := unix.Getpeername(int(fd))
			return perr != unix.ENOTCONN
		})
		if werr != nil {
			return nil, fmt.Errorf("connect %s: timed out", dst)
		}
		if err != nil {
			return nil, fmt.Errorf("connect %s: %w", dst, err)
		}
		if soErr != 0 {
			return nil, fmt.Errorf("connect %s: %w", dst, unix.Errno(soErr))
		}
	}
	c, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", dst, err)
	}
	return c.(*net.TCPConn), nil
}
