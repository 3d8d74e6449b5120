package pcapflows

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

// pkt is a TCP segment a test writes into a synthetic capture.
type pkt struct {
	at         time.Duration // after epoch0
	src, dst   [4]byte
	sport      uint16
	dport      uint16
	seq, ack   uint32
	flags      uint8
	payload    int
	headerOnly bool // capture only the headers (snaplen)
}

var epoch0 = time.Date(2026, 11, 21, 5, 0, 0, 0, time.UTC)

// frame builds an Ethernet/IPv4/TCP frame by hand; payload bytes are
// zeros, and only the headers are returned when headerOnly is set.
func frame(p pkt) []byte {
	b := make([]byte, 14+20+20+p.payload)
	binary.BigEndian.PutUint16(b[12:], 0x0800)
	ip := b[14:]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(40+p.payload))
	ip[8], ip[9] = 64, 6
	copy(ip[12:], p.src[:])
	copy(ip[16:], p.dst[:])
	tcp := ip[20:]
	binary.BigEndian.PutUint16(tcp[0:], p.sport)
	binary.BigEndian.PutUint16(tcp[2:], p.dport)
	binary.BigEndian.PutUint32(tcp[4:], p.seq)
	binary.BigEndian.PutUint32(tcp[8:], p.ack)
	tcp[12] = 5 << 4
	tcp[13] = p.flags
	binary.BigEndian.PutUint16(tcp[14:], 65535)
	return b
}

func writePcap(t testing.TB, pkts []pkt) []byte {
	t.Helper()
	sort.SliceStable(pkts, func(i, j int) bool { return pkts[i].at < pkts[j].at })
	var buf bytes.Buffer
	w := pcapgo.NewWriterNanos(&buf)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for _, p := range pkts {
		f := frame(p)
		data := f
		if p.headerOnly {
			data = f[:54]
		}
		ci := gopacket.CaptureInfo{Timestamp: epoch0.Add(p.at), CaptureLength: len(data), Length: len(f)}
		if err := w.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func writePcapng(t testing.TB, pkts []pkt) []byte {
	t.Helper()
	sort.SliceStable(pkts, func(i, j int) bool { return pkts[i].at < pkts[j].at })
	var buf bytes.Buffer
	w, err := pcapgo.NewNgWriter(&buf, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkts {
		f := frame(p)
		ci := gopacket.CaptureInfo{Timestamp: epoch0.Add(p.at), CaptureLength: len(f), Length: len(f)}
		if err := w.WritePacket(ci, f); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var (
	hostA = [4]byte{10, 0, 0, 1}
	hostB = [4]byte{10, 0, 0, 2}
)

// transfer is a whole connection: handshake at start, size bytes from A
// to B in mss segments one every gap, each ACKed ackDelay later, then
// FINs. It returns the packets and the exact FCT (first SYN to the ACK
// covering the last byte).
func transfer(start time.Duration, sport uint16, isnA, isnB uint32, size, mss int, gap, ackDelay time.Duration) ([]pkt, time.Duration) {
	const syn, ack, fin = flagSYN, flagACK, flagFIN
	var ps []pkt
	a := func(at time.Duration, seq, an uint32, fl uint8, n int) {
		ps = append(ps, pkt{at: at, src: hostA, dst: hostB, sport: sport, dport: 80, seq: seq, ack: an, flags: fl, payload: n})
	}
	b := func(at time.Duration, seq, an uint32, fl uint8) {
		ps = append(ps, pkt{at: at, src: hostB, dst: hostA, sport: 80, dport: sport, seq: seq, ack: an, flags: fl})
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
