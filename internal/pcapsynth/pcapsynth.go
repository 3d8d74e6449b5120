// Package pcapsynth writes synthetic captures for tests: TCP connections built
// packet by packet, so every FCT is known exactly.
package pcapsynth

import (
	"bytes"
	"encoding/binary"
	"sort"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Pkt is a TCP segment a test writes into a synthetic capture.
type Pkt struct {
	At         time.Duration // after Epoch0
	Src, Dst   [4]byte
	Sport      uint16
	Dport      uint16
	Seq, Ack   uint32
	Flags      uint8
	Payload    int
	HeaderOnly bool   // capture only the headers (snaplen)
	Options    []byte // TCP options, a multiple of 4 bytes
}

// TCP flags.
const (
	FlagFIN = 0x01
	FlagSYN = 0x02
	FlagRST = 0x04
	FlagACK = 0x10
)

// Epoch0 is time zero of synthetic captures.
var Epoch0 = time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)

// Frame builds an Ethernet/IPv4/TCP frame by hand; payload bytes are
// zeros, and only the headers are returned when headerOnly is set.
func Frame(p Pkt) []byte {
	tcpLen := 20 + len(p.Options)
	b := make([]byte, 14+20+tcpLen+p.Payload)
	binary.BigEndian.PutUint16(b[12:], 0x0800)
	ip := b[14:]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(20+tcpLen+p.Payload))
	ip[8], ip[9] = 64, 6
	copy(ip[12:], p.Src[:])
	copy(ip[16:], p.Dst[:])
	tcp := ip[20:]
	binary.BigEndian.PutUint16(tcp[0:], p.Sport)
	binary.BigEndian.PutUint16(tcp[2:], p.Dport)
	binary.BigEndian.PutUint32(tcp[4:], p.Seq)
	binary.BigEndian.PutUint32(tcp[8:], p.Ack)
	tcp[12] = byte(tcpLen/4) << 4
	copy(tcp[20:], p.Options)
	tcp[13] = p.Flags
	binary.BigEndian.PutUint16(tcp[14:], 65535)
	return b
}

// WritePcap writes pkts, sorted by time, as a nanosecond pcap.
func WritePcap(t testing.TB, pkts []Pkt) []byte {
	t.Helper()
	sort.SliceStable(pkts, func(i, j int) bool { return pkts[i].At < pkts[j].At })
	var buf bytes.Buffer
	w := pcapgo.NewWriterNanos(&buf)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for _, p := range pkts {
		f := Frame(p)
		data := f
		if p.HeaderOnly {
			data = f[:54+len(p.Options)]
		}
		ci := gopacket.CaptureInfo{Timestamp: Epoch0.Add(p.At), CaptureLength: len(data), Length: len(f)}
		if err := w.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// WritePcapng writes pkts, sorted by time, as pcapng.
func WritePcapng(t testing.TB, pkts []Pkt) []byte {
	t.Helper()
	sort.SliceStable(pkts, func(i, j int) bool { return pkts[i].At < pkts[j].At })
	var buf bytes.Buffer
	w, err := pcapgo.NewNgWriter(&buf, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkts {
		f := Frame(p)
		ci := gopacket.CaptureInfo{Timestamp: Epoch0.Add(p.At), CaptureLength: len(f), Length: len(f)}
		if err := w.WritePacket(ci, f); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Two hosts for tests.
var (
	HostA = [4]byte{10, 0, 0, 1}
	HostB = [4]byte{10, 0, 0, 2}
)

// Transfer is a whole connection: handshake at start, size bytes from A
// to B in mss segments one every gap, each ACKed ackDelay later, then
// FINs. It returns the packets and the exact FCT (first SYN to the ACK
// covering the last byte).
func Transfer(start time.Duration, sport uint16, isnA, isnB uint32, size, mss int, gap, ackDelay time.Duration) ([]Pkt, time.Duration) {
	return TransferBetween(HostA, HostB, start, sport, isnA, isnB, size, mss, gap, ackDelay)
}

// TransferBetween is Transfer from src to dst (port 80).
func TransferBetween(src, dst [4]byte, start time.Duration, sport uint16, isnA, isnB uint32, size, mss int, gap, ackDelay time.Duration) ([]Pkt, time.Duration) {
	const syn, ack, fin = FlagSYN, FlagACK, FlagFIN
	var ps []Pkt
	a := func(at time.Duration, seq, an uint32, fl uint8, n int) {
		ps = append(ps, Pkt{At: at, Src: src, Dst: dst, Sport: sport, Dport: 80, Seq: seq, Ack: an, Flags: fl, Payload: n})
	}
	b := func(at time.Duration, seq, an uint32, fl uint8) {
		ps = append(ps, Pkt{At: at, Src: dst, Dst: src, Sport: 80, Dport: sport, Seq: seq, Ack: an, Flags: fl})
	}
	t := start
	a(t, isnA, 0, syn, 0)
	b(t+ackDelay, isnB, isnA+1, syn|ack)
	t += 2 * ackDelay
	a(t, isnA+1, isnB+1, ack, 0)
	seq := isnA + 1
	var lastAck time.Duration
	for sent := 0; sent < size; sent += mss {
		n := min(mss, size-sent)
		t += gap
		a(t, seq, isnB+1, ack, n)
		seq += uint32(n)
		lastAck = t + ackDelay
		b(lastAck, isnB+1, seq, ack)
	}
	a(lastAck+gap, seq, isnB+1, fin|ack, 0)
	b(lastAck+gap+ackDelay, isnB+1, seq+1, fin|ack)
	a(lastAck+gap+2*ackDelay, seq+1, isnB+2, ack, 0)
	return ps, lastAck - start
}
