// Package pkt builds and parses IPv4/TCP packets byte by byte, options
// included exactly as given (malformed ones too), for the tcopt tests.
package pkt

import (
	"encoding/binary"
	"errors"
	"net/netip"
)

// TCP flag bits.
const (
	FIN = 0x01
	SYN = 0x02
	RST = 0x04
	PSH = 0x08
	ACK = 0x10
)

// Segment is an IPv4 TCP segment.
type Segment struct {
	Src, Dst     netip.Addr
	SPort, DPort uint16
	Seq, Ack     uint32
	Flags        uint8
	Window       uint16
	Options      []byte // TCP options area, padded to 4 bytes with EOL by Build
	Payload      []byte
	IPLen        int  // total length from the IP header (parsed)
	ChecksumOK   bool // TCP checksum verified (parsed)
}

// Build encodes s as an IPv4 packet with correct IP and TCP checksums.
func Build(s Segment) []byte {
	opts := s.Options
	for len(opts)%4 != 0 {
		opts = append(opts[:len(opts):len(opts)], 0)
	}
	thl := 20 + len(opts)
	total := 20 + thl + len(s.Payload)
	b := make([]byte, total)
	b[0] = 0x45
	binary.BigEndian.PutUint16(b[2:], uint16(total))
	b[6] = 0x40 // DF
	b[8] = 64
	b[9] = 6
	src, dst := s.Src.As4(), s.Dst.As4()
	copy(b[12:16], src[:])
	copy(b[16:20], dst[:])
	binary.BigEndian.PutUint16(b[10:], ^sum(b[:20], 0))
	t := b[20:]
	binary.BigEndian.PutUint16(t[0:], s.SPort)
	binary.BigEndian.PutUint16(t[2:], s.DPort)
	binary.BigEndian.PutUint32(t[4:], s.Seq)
	binary.BigEndian.PutUint32(t[8:], s.Ack)
	t[12] = byte(thl/4) << 4
	t[13] = s.Flags
	binary.BigEndian.PutUint16(t[14:], s.Window)
	copy(t[20:], opts)
	copy(t[thl:], s.Payload)
	binary.BigEndian.PutUint16(t[16:], ^sum(t, pseudo(b)))
	return b
}

func pseudo(ip []byte) uint32 {
	var s uint32
	for i := 12; i < 20; i += 2 {
		s += uint32(binary.BigEndian.Uint16(ip[i:]))
	}
	return s + 6 + uint32(len(ip)-20)
}

func sum(b []byte, s uint32) uint16 {
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return uint16(s)
}

// ErrNotTCP is returned by Parse for anything but an IPv4 TCP packet.
var ErrNotTCP = errors.New("not an IPv4 TCP packet")

// Parse decodes an IPv4 packet (from the IP header on). A capture may cut
// the payload short (snap length): the checksum is then not verified.
func Parse(b []byte) (Segment, error) {
	if len(b) < 20 || b[0]>>4 != 4 || b[9] != 6 {
		return Segment{}, ErrNotTCP
	}
	ihl := int(b[0]&0xf) * 4
	total := int(binary.BigEndian.Uint16(b[2:]))
	if ihl < 20 || len(b) < ihl+20 || total < ihl+20 {
		return Segment{}, ErrNotTCP
	}
	t := b[ihl:]
	thl := int(t[12]>>4) * 4
	if thl < 20 || len(t) < thl {
		return Segment{}, ErrNotTCP
	}
	s := Segment{
		Src:     netip.AddrFrom4([4]byte(b[12:16])),
		Dst:     netip.AddrFrom4([4]byte(b[16:20])),
		SPort:   binary.BigEndian.Uint16(t[0:]),
		DPort:   binary.BigEndian.Uint16(t[2:]),
		Seq:     binary.BigEndian.Uint32(t[4:]),
		Ack:     binary.BigEndian.Uint32(t[8:]),
		Flags:   t[13],
		Window:  binary.BigEndian.Uint16(t[14:]),
		Options: t[20:thl],
		IPLen:   total,
	}
	end := total - ihl
	if end > len(t) {
		end = len(t)
	}
	s.Payload = t[thl:end]
	if len(b) >= total && ihl == 20 {
		s.ChecksumOK = sum(b[20:total], pseudo(b[:total])) == 0xffff
	}
	return s, nil
}
