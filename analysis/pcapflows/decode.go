package pcapflows

import (
	"encoding/binary"
	"net/netip"
)

// Link types this reader decodes (tcpdump.org/linktypes.html).
const (
	linkNull     = 0
	linkEthernet = 1
	linkRaw      = 101
	linkRawAlt   = 12
	linkLoop     = 108
	linkSLL      = 113
	linkIPv4     = 228
	linkIPv6     = 229
	linkSLL2     = 276
)

func supportedLink(lt uint32) bool {
	switch lt {
	case linkNull, linkEthernet, linkRaw, linkRawAlt, linkLoop, linkSLL, linkIPv4, linkIPv6, linkSLL2:
		return true
	}
	return false
}

// segment is one decoded TCP segment. Payload length comes from the IP
// header, not from the captured bytes, so headers-only captures work.
type segment struct {
	src, dst   [16]byte
	v6         bool
	sport      uint16
	dport      uint16
	seq, ack   uint32
	flags      uint8
	payloadLen uint32
	options    []byte // TCP options as captured (may be cut by the snap length)
}

const (
	flagFIN = 0x01
	flagSYN = 0x02
	flagRST = 0x04
	flagACK = 0x10
)

func (s *segment) srcAddr() netip.Addr {
	if s.v6 {
		return netip.AddrFrom16(s.src)
	}
	return netip.AddrFrom4([4]byte(s.src[:4]))
}

func (s *segment) dstAddr() netip.Addr {
	if s.v6 {
		return netip.AddrFrom16(s.dst)
	}
	return netip.AddrFrom4([4]byte(s.dst[:4]))
}

// decode parses link, IP and TCP headers from data by hand (gopacket's
// layer decoding allocates per packet and is several times slower). It
// returns false for anything that is not a well-formed TCP segment whose
// TCP header was captured whole; every length is bounds-checked.
func decode(lt uint32, data []byte, s *segment) bool {
	var ethType uint16
	switch lt {
	case linkEthernet:
		if len(data) < 14 {
			return false
		}
		ethType = binary.BigEndian.Uint16(data[12:14])
		data = data[14:]
		// Up to two VLAN tags (802.1Q, 802.1ad).
		for i := 0; i < 2 && (ethType == 0x8100 || ethType == 0x88a8); i++ {
			if len(data) < 4 {
				return false
			}
			ethType = binary.BigEndian.Uint16(data[2:4])
			data = data[4:]
		}
	case linkSLL:
		if len(data) < 16 {
			return false
		}
		ethType = binary.BigEndian.Uint16(data[14:16])
		data = data[16:]
	case linkSLL2:
		if len(data) < 20 {
			return false
		}
		ethType = binary.BigEndian.Uint16(data[0:2])
		data = data[20:]
	case linkNull, linkLoop:
		if len(data) < 4 {
			return false
		}
		data = data[4:]
		ethType = ipVersionType(data)
	case linkRaw, linkRawAlt, linkIPv4, linkIPv6:
		ethType = ipVersionType(data)
	default:
		return false
	}
	var l4 []byte
	var l4Len int // TCP header + payload length from the IP header
	switch ethType {
	case 0x0800:
		if len(data) < 20 || data[0]>>4 != 4 {
			return false
		}
		ihl := int(data[0]&0x0f) * 4
		total := int(binary.BigEndian.Uint16(data[2:4]))
		if total == 0 {
			// Captured TSO super-packets may carry 0: use the bytes.
			total = len(data)
		}
		if ihl < 20 || len(data) < ihl || total < ihl || data[9] != 6 {
			return false
		}
		// Fragments other than the first carry no TCP header.
		if binary.BigEndian.Uint16(data[6:8])&0x1fff != 0 {
			return false
		}
		s.v6 = false
		s.src = [16]byte{}
		s.dst = [16]byte{}
		copy(s.src[:4], data[12:16])
		copy(s.dst[:4], data[16:20])
		l4 = data[ihl:]
		l4Len = total - ihl
	case 0x86dd:
		if len(data) < 40 || data[0]>>4 != 6 {
			return false
		}
		// Extension headers are not followed: datacenter TCP has none.
		if data[6] != 6 {
			return false
		}
		s.v6 = true
		copy(s.src[:], data[8:24])
		copy(s.dst[:], data[24:40])
		l4 = data[40:]
		l4Len = int(binary.BigEndian.Uint16(data[4:6]))
	default:
		return false
	}
	if len(l4) < 20 {
		return false
	}
	off := int(l4[12]>>4) * 4
	if off < 20 || len(l4) < off || l4Len < off {
		return false
	}
	s.sport = binary.BigEndian.Uint16(l4[0:2])
	s.dport = binary.BigEndian.Uint16(l4[2:4])
	s.seq = binary.BigEndian.Uint32(l4[4:8])
	s.ack = binary.BigEndian.Uint32(l4[8:12])
	s.flags = l4[13]
	s.payloadLen = uint32(l4Len - off)
	s.options = l4[20:off]
	return true
}

func ipVersionType(data []byte) uint16 {
	if len(data) == 0 {
		return 0
	}
	switch data[0] >> 4 {
	case 4:
		return 0x0800
	case 6:
		return 0x86dd
	}
	return 0
}
