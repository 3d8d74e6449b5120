package netbuild

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Offloads are set with the ethtool ioctl, in-process: one
// ETHTOOL_SFEATURES per interface sets every feature bit of a group at
// once. Feature bits are looked up by name (ETHTOOL_GSTRINGS), because the
// legacy per-feature commands miss newer bits (on 6.18 ETHTOOL_STSO leaves
// tx-tcp-accecn-segmentation on).
const (
	ethtoolGSTRINGS  = 0x1b
	ethtoolGSSETINFO = 0x37
	ethtoolGFEATURES = 0x3a
	ethtoolSFEATURES = 0x3b
	ethSSFeatures    = 4 // ETH_SS_FEATURES
	ethGStringLen    = 32
)

type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data uintptr
	_    [16]byte
}

// ethtool issues one SIOCETHTOOL on iface with buf as the command block.
// buf must start with the command and must not be moved by the caller
// during the call (it is a Go slice passed by address).
func ethtool(sock int, iface string, buf []byte) error {
	var req ifreqData
	copy(req.name[:], iface)
	req.data = uintptr(unsafe.Pointer(&buf[0]))
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(sock), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&req)))
	runtime.KeepAlive(buf)
	if errno != 0 {
		return errno
	}
	return nil
}

func putU32(b []byte, off int, v uint32) { *(*uint32)(unsafe.Pointer(&b[off])) = v }
func getU32(b []byte, off int) uint32    { return *(*uint32)(unsafe.Pointer(&b[off])) }

// featureNames returns the kernel's feature names, indexed by bit.
func featureNames(sock int, iface string) ([]string, error) {
	// struct ethtool_sset_info { u32 cmd, reserved; u64 sset_mask; u32 data[1]; }
	info := make([]byte, 24)
	putU32(info, 0, ethtoolGSSETINFO)
	*(*uint64)(unsafe.Pointer(&info[8])) = 1 << ethSSFeatures
	if err := ethtool(sock, iface, info); err != nil {
		return nil, fmt.Errorf("ethtool %s: feature count: %w", iface, err)
	}
	n := int(getU32(info, 16))
	if n <= 0 || n > 4096 {
		return nil, fmt.Errorf("ethtool %s: %d features", iface, n)
	}
	// struct ethtool_gstrings { u32 cmd, string_set, len; u8 data[]; }
	gs := make([]byte, 12+n*ethGStringLen)
	putU32(gs, 0, ethtoolGSTRINGS)
	putU32(gs, 4, ethSSFeatures)
	putU32(gs, 8, uint32(n))
	if err := ethtool(sock, iface, gs); err != nil {
		return nil, fmt.Errorf("ethtool %s: feature names: %w", iface, err)
	}
	names := make([]string, n)
	for i := range names {
		s := gs[12+i*ethGStringLen : 12+(i+1)*ethGStringLen]
		if j := bytes.IndexByte(s, 0); j >= 0 {
			s = s[:j]
		}
		names[i] = string(s)
	}
	return names, nil
}

// offloadGroup is the set of feature names one option covers.
type offloadGroup struct {
	match func(name string) bool
	on    bool
}

func offloadGroups(opt Options) []offloadGroup {
	return []offloadGroup{
		{func(n string) bool { return strings.HasPrefix(n, "tx-tcp") && strings.HasSuffix(n, "segmentation") }, opt.TSO},
		{func(n string) bool { return n == "tx-generic-segmentation" }, opt.GSO},
		{func(n string) bool { return n == "rx-gro" }, opt.GRO},
		{func(n string) bool { return strings.HasPrefix(n, "tx-checksum") }, opt.TxChecksum},
	}
}

// portOffloads are the offloads a port gets: the options', but none that
// makes frames above the MTU on a lossless port (its TBF drops them).
func portOffloads(opt Options) Options {
	if opt.Lossless {
		opt.TSO, opt.GSO, opt.GRO = false, false, false
	}
	return opt
}

// setOffloads requests the options' offloads on iface in one ioctl. The
// kernel drops what a device cannot do or what depends on a feature turned
// off (TSO without tx checksumming); that is not an error.
func setOffloads(sock int, iface string, names []string, opt Options) error {
	words := (len(names) + 31) / 32
	// struct ethtool_sfeatures { u32 cmd, size; struct { u32 valid, requested; } features[]; }
	buf := make([]byte, 8+8*words)
	putU32(buf, 0, ethtoolSFEATURES)
	putU32(buf, 4, uint32(words))
	for _, g := range offloadGroups(opt) {
		for bit, n := range names {
			if !g.match(n) {
				continue
			}
			w := 8 + 8*(bit/32)
			putU32(buf, w, getU32(buf, w)|1<<(bit%32))
			if g.on {
				putU32(buf, w+4, getU32(buf, w+4)|1<<(bit%32))
			}
		}
	}
	if err := ethtool(sock, iface, buf); err != nil {
		return fmt.Errorf("ethtool %s: set features: %w", iface, err)
	}
	return nil
}

// Features returns the active features of iface by name, read through a
// socket in its namespace.
func Features(sock int, iface string) (map[string]bool, error) {
	names, err := featureNames(sock, iface)
	if err != nil {
		return nil, err
	}
	words := (len(names) + 31) / 32
	// struct ethtool_gfeatures { u32 cmd, size; struct { u32 available, requested, active, never_changed; } features[]; }
	buf := make([]byte, 8+16*words)
	putU32(buf, 0, ethtoolGFEATURES)
	putU32(buf, 4, uint32(words))
	if err := ethtool(sock, iface, buf); err != nil {
		return nil, fmt.Errorf("ethtool %s: get features: %w", iface, err)
	}
	out := map[string]bool{}
	for bit, n := range names {
		if n == "" {
			continue
		}
		out[n] = getU32(buf, 8+16*(bit/32)+8)&(1<<(bit%32)) != 0
	}
	return out, nil
}
