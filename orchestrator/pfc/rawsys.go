package pfc

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The actuator's own changes (settle, the resumes at stop) send the
// request serialised at Open on the netlink socket with raw syscalls,
// as the C thread sends the same bytes (ctl.c).

// rawNetlink sends the serialised request msg on the netlink socket fd
// and reads its acknowledgement into buf: nil when the kernel accepted
// it.
func rawNetlink(fd int, msg, buf []byte) error {
	_, _, errno := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(&msg[0])), uintptr(len(msg)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("netlink send: %w", errno)
	}
	for {
		n, _, errno := unix.RawSyscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return fmt.Errorf("netlink receive: %w", errno)
		}
		return netlinkAck(buf[:n])
	}
}

// netlinkAck reads a netlink acknowledgement: an NLMSG_ERROR message
// whose error is 0.
func netlinkAck(b []byte) error {
	if len(b) < unix.NLMSG_HDRLEN+4 {
		return fmt.Errorf("netlink: a reply of %d bytes", len(b))
	}
	typ := binary.NativeEndian.Uint16(b[4:])
	if typ != unix.NLMSG_ERROR {
		return fmt.Errorf("netlink: a reply of type %d, want an acknowledgement", typ)
	}
	if code := int32(binary.NativeEndian.Uint32(b[unix.NLMSG_HDRLEN:])); code != 0 {
		return fmt.Errorf("netlink: %w", unix.Errno(-code))
	}
	return nil
}

// rawSendto sends frame on the packet socket fd to the link-layer
// address sa.
func rawSendto(fd int, frame []byte, sa *unix.RawSockaddrLinklayer) error {
	_, _, errno := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(&frame[0])), uintptr(len(frame)), 0,
		uintptr(unsafe.Pointer(sa)), unsafe.Sizeof(*sa))
	if errno != 0 {
		return errno
	}
	return nil
}
