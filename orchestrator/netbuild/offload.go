package netbuild

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Legacy ethtool commands (linux/ethtool.h); the kernel maps them onto the
// feature bits, so one ioctl per feature, in-process, no ethtool binary.
const (
	ethtoolSTXCSUM = 0x17 // tx-checksumming
	ethtoolSTSO    = 0x1f // tcp-segmentation-offload
	ethtoolSGSO    = 0x24 // generic-segmentation-offload
	ethtoolSGRO    = 0x2c // generic-receive-offload
)

type ethtoolValue struct {
	cmd  uint32
	data uint32
}

type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data uintptr
	_    [16]byte
}

// setFeature sets one ethtool feature of iface through a socket that lives
// in the interface's namespace.
func setFeature(sock int, iface string, cmd uint32, on bool) error {
	v := ethtoolValue{cmd: cmd}
	if on {
		v.data = 1
	}
	var req ifreqData
	copy(req.name[:], iface)
	req.data = uintptr(unsafe.Pointer(&v))
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(sock), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&req)))
	if errno != 0 {
		return fmt.Errorf("ethtool %s cmd %#x=%v: %w", iface, cmd, on, errno)
	}
	return nil
}

// vethDefaults are a new veth's features: checksum, TSO and GSO on, GRO
// off. Only differing features are set, which saves ioctls at build time.
var vethDefaults = map[uint32]bool{ethtoolSTXCSUM: true, ethtoolSTSO: true, ethtoolSGSO: true, ethtoolSGRO: false}

// setOffloads applies the options' offload switches to a new veth. Order
// matters: TSO needs tx checksumming, so checksums go first when turning
// on and last when turning off.
func setOffloads(sock int, iface string, opt Options) error {
	type step struct {
		cmd uint32
		on  bool
	}
	steps := []step{{ethtoolSTSO, opt.TSO}, {ethtoolSGSO, opt.GSO}, {ethtoolSGRO, opt.GRO}}
	if opt.TxChecksum {
		steps = append([]step{{ethtoolSTXCSUM, true}}, steps...)
	} else {
		steps = append(steps, step{ethtoolSTXCSUM, false})
	}
	for _, s := range steps {
		if vethDefaults[s.cmd] == s.on {
			continue
		}
		if err := setFeature(sock, iface, s.cmd, s.on); err != nil {
			return err
		}
	}
	return nil
}
