package netbuild

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

func socketHere() (int, error) { return unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0) }

func closeFD(fd int) { unix.Close(fd) }

// getFeature issues a legacy ethtool get command (GTXCSUM 0x16, GTSO 0x1e,
// GGSO 0x23, GGRO 0x2b).
func getFeature(sock int, iface string, cmd uint32) (bool, error) {
	v := ethtoolValue{cmd: cmd}
	var req ifreqData
	copy(req.name[:], iface)
	req.data = uintptr(unsafe.Pointer(&v))
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(sock), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&req)))
	if errno != 0 {
		return false, errno
	}
	return v.data != 0, nil
}
