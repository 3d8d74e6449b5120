package pcapflows

import (
	"bytes"
	synth "cclab/internal/pcapsynth"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"
)

func read(t *testing.T, b []byte) *Capture {
	t.Helper()
	c, err := Read(context.Background(), bytes.NewReader(b), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestExactFCTWithHandshake(t *testing.T) {
	ps, fct := synth.Transfer(0, 40000, 1000, 5000, 10_000, 1460, 10*time.Microsecond, 25*time.Microsecond)
	c := read(t, synth.WritePcap(t, ps))
	if len(c.Flows) != 1 {
		t.Fatalf("%d flows, want 1", len(c.Flows))
	}
	f := c.Flows[0]
	if f.Status != StatusComplete || f.FCT != fct || !f.HandshakeSeen || !f.DataFromClient {
		t.Fatalf("flow %+v, want complete with FCT %v", f, fct)
	}
	if f.Bytes != 10_000 || f.ReverseBytes != 0 || f.Retransmits != 0 || f.DataPackets != 7 {
		t.Fatalf("flow %+v: want 10000 bytes in 7 segments, no retransmission", f)
	}
	if f.Client.Port() != 40000 || f.Server.Port() != 80 || f.Client.Addr().String() != "10.0.0.1" {
		t.Fatalf("endpoints %v -> %v", f.Client, f.Server)
	}
	if c.Packets != uint64(len(ps)) || c.TCPPackets != c.Packets || c.Skipped != 0 {
		t.Fatalf("packet counts %+v", c)
	}
}

func TestSequenceWraparound(t *testing.T) {
	// The ISN is 3000 bytes below 2^32: the data crosses the wrap.
	ps, fct := synth.Transfer(0, 40001, 0xffffffff-3000, 0xfffffff0, 20_000, 1000, 5*time.Microsecond, 7*time.Microsecond)
	f := read(t, synth.WritePcap(t, ps)).Flows[0]
	if f.Status != StatusComplete || f.FCT != fct || f.Bytes != 20_000 || f.Retransmits != 0 {
		t.Fatalf("flow %+v, want 20000 bytes complete in %v", f, fct)
	}
}

func TestRetransmissionsAndHeadersOnly(t *testing.T) {
	ps, _ := synth.Transfer(0, 40002, 7, 9, 4000, 1000, 10*time.Microsecond, 30*time.Microsecond)
	// Resend the second segment late; its ACK is the last one needed.
	var second synth.Pkt
	for _, p := range ps {
		if p.Payload > 0 && p.Seq == 7+1+1000 {
			second = p
		}
	}
	for i := range ps {
		ps[i].HeaderOnly = true
		// Drop the ACKs covering bytes 1001..: the receiver waits for the resend.
		if ps[i].Src == synth.HostB && ps[i].Flags == flagACK && ps[i].Ack > 7+1+1000 {
			ps[i].Ack = 7 + 1 + 1000
		}
	}
	re := second
	re.At = time.Millisecond
	re.HeaderOnly = true
	final := synth.Pkt{At: time.Millisecond + 30*time.Microsecond, Src: synth.HostB, Dst: synth.HostA, Sport: 80, Dport: 40002, Seq: 10, Ack: 7 + 1 + 4000, Flags: flagACK}
	fin := synth.Pkt{At: time.Millisecond + 40*time.Microsecond, Src: synth.HostA, Dst: synth.HostB, Sport: 40002, Dport: 80, Seq: 7 + 1 + 4000, Ack: 10, Flags: flagFIN | flagACK}
	// Remove the original FIN exchange so the close comes after the resend.
	var kept []synth.Pkt
	for _, p := range ps {
		if p.Flags&flagFIN == 0 && !(p.Src == synth.HostA && p.Payload == 0 && p.Seq == 7+1+4000+1) {
			kept = append(kept, p)
		}
	}
	kept = append(kept, re, final, fin)
	c := read(t, synth.WritePcap(t, kept))
	f := c.Flows[0]
	want := time.Millisecond + 30*time.Microsecond
	if f.Status != StatusComplete || f.FCT != want {
		t.Fatalf("flow %+v, want complete in %v", f, want)
	}
	if f.Bytes != 4000 || f.Retransmits != 1 || f.RetransBytes != 1000 || f.DataPackets != 5 {
		t.Fatalf("flow %+v: want 4000 bytes, 1 retransmission of 1000 bytes", f)
	}
}

func TestMidFlowCaptureStartsAtFirstData(t *testing.T) {
	ps, _ := synth.Transfer(0, 40003, 100, 200, 10_000, 1000, 10*time.Microsecond, 20*time.Microsecond)
	// Drop everything before the third data segment.
	var cut []synth.Pkt
	var firstData time.Duration = -1
	dataSeen := 0
	for _, p := range ps {
		if p.Src == synth.HostA && p.Payload > 0 {
			dataSeen++
		}
		if dataSeen < 3 {
			continue
		}
		if firstData < 0 {
			firstData = p.At
		}
		cut = append(cut, p)
	}
	f := read(t, synth.WritePcap(t, cut)).Flows[0]
	var lastAck time.Duration
	for _, p := range cut {
		if p.Src == synth.HostB && p.Ack == 100+1+10_000 && p.Flags == flagACK {
			lastAck = p.At
		}
	}
	if f.HandshakeSeen || f.Status != StatusComplete || f.FCT != lastAck-firstData || f.Bytes != 8000 {
		t.Fatalf("flow %+v, want 8000 bytes complete in %v", f, lastAck-firstData)
	}
	if f.Client.Port() != 40003 {
		t.Fatalf("client %v: the first packet's sender should be the client", f.Client)
	}
}

func TestPortReuseSplitsFlows(t *testing.T) {
	p1, fct1 := synth.Transfer(0, 40004, 1000, 2000, 3000, 1000, 10*time.Microsecond, 20*time.Microsecond)
	p2, fct2 := synth.Transfer(time.Millisecond, 40004, 900000, 1, 5000, 1000, 10*time.Microsecond, 20*time.Microsecond)
	c := read(t, synth.WritePcap(t, append(p1, p2...)))
	if len(c.Flows) != 2 {
		t.Fatalf("%d flows, want 2", len(c.Flows))
	}
	if c.Flows[0].FCT != fct1 || c.Flows[0].Bytes != 3000 || c.Flows[1].FCT != fct2 || c.Flows[1].Bytes != 5000 {
		t.Fatalf("flows %+v, want FCTs %v and %v", c.Flows, fct1, fct2)
	}
}

func TestUnackedAndOpenFlowsHaveNoFCT(t *testing.T) {
	ps, _ := synth.Transfer(0, 40005, 1, 1, 3000, 1000, 10*time.Microsecond, 20*time.Microsecond)
	var noLastAck, noFin []synth.Pkt
	for _, p := range ps {
		if p.Flags&flagFIN == 0 && !(p.Src == synth.HostA && p.Payload == 0 && p.Seq > 3000) {
			noFin = append(noFin, p)
		}
		if !(p.Src == synth.HostB && p.Ack >= 3001) {
			noLastAck = append(noLastAck, p)
		}
	}
	if f := read(t, synth.WritePcap(t, noLastAck)).Flows[0]; f.Status != StatusIncomplete || f.FCT != 0 || f.End != 0 {
		t.Fatalf("flow without the last ACK: %+v", f)
	}
	if f := read(t, synth.WritePcap(t, noFin)).Flows[0]; f.Status != StatusOpen || f.FCT != 0 {
		t.Fatalf("flow without FIN: %+v", f)
	}
}

func TestPcapngGivesTheSameFlows(t *testing.T) {
	var ps []synth.Pkt
	for i := range 5 {
		p, _ := synth.Transfer(time.Duration(i)*100*time.Microsecond, uint16(41000+i), uint32(i*77777), 5, 2000*(i+1), 1460, 3*time.Microsecond, 11*time.Microsecond)
		ps = append(ps, p...)
	}
	a := read(t, synth.WritePcap(t, append([]synth.Pkt(nil), ps...)))
	b := read(t, synth.WritePcapng(t, ps))
	if b.Format != "pcapng" || a.Format != "pcap" || len(a.Flows) != 5 || len(b.Flows) != 5 {
		t.Fatalf("formats %s/%s flows %d/%d", a.Format, b.Format, len(a.Flows), len(b.Flows))
	}
	for i := range a.Flows {
		if a.Flows[i] != b.Flows[i] {
			t.Fatalf("flow %d differs:\npcap   %+v\npcapng %+v", i, a.Flows[i], b.Flows[i])
		}
	}
}

// A capture cut mid-record, or with a record that cannot be one, is read
// up to the damage: the packets before it, and where it starts.
func TestCutCaptureIsReadToTheDamage(t *testing.T) {
	ps, _ := synth.Transfer(0, 40006, 1, 1, 3000, 1000, 10*time.Microsecond, 20*time.Microsecond)
	good := synth.WritePcap(t, ps)
	// Offsets of the records: 24-byte file header, 16-byte record headers.
	var offsets []int64
	for off := int64(24); off < int64(len(good)); {
		offsets = append(offsets, off)
		off += 16 + int64(binary.LittleEndian.Uint32(good[off+8:]))
	}
	cut := offsets[4] + 20 // inside record 5's data
	c := read(t, good[:cut])
	if c.Cut == nil || c.Cut.Offset != offsets[4] || !c.Cut.Exact || c.Cut.Packets != 4 || c.Packets != 4 ||
		!strings.Contains(c.Cut.Reason, "truncated record") {
		t.Fatalf("truncated file: %d packets, cut %+v, want 4 packets and a cut at %d", c.Packets, c.Cut, offsets[4])
	}
	if !strings.Contains(c.Cut.String(), fmt.Sprintf("at byte offset %d", offsets[4])) {
		t.Fatalf("%q does not name the offset", c.Cut)
	}
	// What was read is what the first four records give.
	if want := read(t, good[:offsets[4]]); want.Cut != nil || len(c.Flows) != len(want.Flows) || c.Flows[0] != want.Flows[0] {
		t.Fatalf("flows before the cut %+v, want %+v", c.Flows, want.Flows)
	}
	// A record claiming a huge capture length.
	bad := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(bad[offsets[2]+8:], 1<<30)
	if c := read(t, bad); c.Cut == nil || c.Cut.Offset != offsets[2] || c.Packets != 2 {
		t.Fatalf("corrupt length: %d packets, cut %+v", c.Packets, c.Cut)
	}
	// The whole file has no cut.
	if c := read(t, good); c.Cut != nil || c.Packets != uint64(len(offsets)) {
		t.Fatalf("whole file: %d packets, cut %+v", c.Packets, c.Cut)
	}
}

// A file whose header cannot be read is an error: nothing in it can be.
func TestBadInputIsAClearError(t *testing.T) {
	ps, _ := synth.Transfer(0, 40006, 1, 1, 3000, 1000, 10*time.Microsecond, 20*time.Microsecond)
	good := synth.WritePcap(t, ps)
	if _, err := Read(context.Background(), bytes.NewReader(nil), Options{}); err == nil {
		t.Fatal("empty file read without error")
	}
	if _, err := Read(context.Background(), strings.NewReader("this is not a capture file"), Options{}); err == nil {
		t.Fatal("text file read without error")
	}
	if _, err := Read(context.Background(), bytes.NewReader(good[:20]), Options{}); err == nil {
		t.Fatal("a cut file header read without error")
	}
	// A valid capture with no packets is empty, not an error.
	c := read(t, good[:24])
	if c.Packets != 0 || len(c.Flows) != 0 || c.Cut != nil {
		t.Fatalf("header-only capture: %+v", c)
	}
}

func TestObserverSeesNewBytes(t *testing.T) {
	ps, _ := synth.Transfer(0, 40007, 1, 1, 5000, 1000, 10*time.Microsecond, 20*time.Microsecond)
	ps = append(ps, ps[5]) // duplicate a data segment at its own time
	var newBytes, payload uint64
	_, err := Read(context.Background(), bytes.NewReader(synth.WritePcap(t, ps)), Options{Observe: func(p *Packet) {
		newBytes += uint64(p.NewBytes)
		payload += uint64(p.PayloadLen)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if newBytes != 5000 || payload != 6000 {
		t.Fatalf("observer saw %d new of %d payload bytes, want 5000 of 6000", newBytes, payload)
	}
}

// checkCapture asserts what must hold for any input: no partial result
// with an error, counts that add up (a cut after the packets read, inside
// the file), FCTs only on complete flows.
func checkCapture(t *testing.T, b []byte) {
	c, err := Read(context.Background(), bytes.NewReader(b), Options{})
	if err != nil {
		if c != nil {
			t.Fatal("a partial result came with an error")
		}
		return
	}
	if c.TCPPackets+c.Skipped != c.Packets {
		t.Fatalf("packet counts do not add up: %+v", c)
	}
	if c.Cut != nil && (c.Cut.Packets != c.Packets || c.Cut.Offset < 0 || c.Cut.Offset > int64(len(b))) {
		t.Fatalf("cut %+v after %d packets in %d bytes", c.Cut, c.Packets, len(b))
	}
	for _, fl := range c.Flows {
		if fl.Status == StatusComplete && fl.FCT != time.Duration(fl.End-fl.Start) {
			t.Fatalf("complete flow with FCT %v != end-start: %+v", fl.FCT, fl)
		}
		if fl.Status != StatusComplete && fl.FCT != 0 {
			t.Fatalf("flow with status %s has an FCT: %+v", fl.Status, fl)
		}
		if (fl.Bytes == 0) != (fl.Status == StatusNoData) {
			t.Fatalf("bytes %d with status %s", fl.Bytes, fl.Status)
		}
	}
}

func seeds(t testing.TB) [][]byte {
	ps, _ := synth.Transfer(0, 40008, 1, 1, 3000, 1000, 10*time.Microsecond, 20*time.Microsecond)
	return [][]byte{synth.WritePcap(t, append([]synth.Pkt(nil), ps...)), synth.WritePcapng(t, ps)}
}

func FuzzRead(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	f.Fuzz(checkCapture)
}

// TestRandomCorruption is the always-on share of the fuzzing: a few
// thousand seeded corruptions and truncations of both formats.
func TestRandomCorruption(t *testing.T) {
	ss := seeds(t)
	r := rand.New(rand.NewSource(1))
	for i := range 5000 {
		b := append([]byte(nil), ss[i%2]...)
		for range 1 + r.Intn(6) {
			b[r.Intn(len(b))] = byte(r.Intn(256))
		}
		if r.Intn(4) == 0 {
			b = b[:r.Intn(len(b))]
		}
		checkCapture(t, b)
	}
}

// TestCutPcapngNamesTheBlock: a pcapng cut names the first byte of the
// block the read failed in, as a pcap cut names the record's.
func TestCutPcapngNamesTheBlock(t *testing.T) {
	ps, _ := synth.Transfer(0, 40009, 1, 1, 3000, 1000, 10*time.Microsecond, 20*time.Microsecond)
	good := synth.WritePcapng(t, ps)
	// Walk the blocks (little-endian: type, total length): the section
	// and interface headers, then one enhanced packet block per packet.
	var packets []int64
	for off := int64(0); off < int64(len(good)); off += int64(binary.LittleEndian.Uint32(good[off+4:])) {
		if binary.LittleEndian.Uint32(good[off:]) == 6 {
			packets = append(packets, off)
		}
	}
	if len(packets) != len(ps) {
		t.Fatalf("%d packet blocks for %d packets", len(packets), len(ps))
	}
	check := func(name string, b []byte, packet int) {
		t.Helper()
		c := read(t, b)
		if c.Cut == nil || !c.Cut.Exact || c.Packets != uint64(packet-1) || c.Cut.Offset != packets[packet-1] ||
			!strings.Contains(c.Cut.String(), fmt.Sprintf("at byte offset %d", packets[packet-1])) {
			t.Fatalf("%s: %d packets, cut %v; want %d packets and a cut at byte offset %d", name, c.Packets, c.Cut, packet-1, packets[packet-1])
		}
	}
	check("truncated", good[:len(good)-10], len(ps))
	last := len(ps)
	check("cut inside a block header", good[:packets[last-1]+6], last)

	bad := append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(bad[packets[3]+4:], 7) // impossible block length
	check("block length", bad, 4)

	bad = append([]byte(nil), good...)
	binary.LittleEndian.PutUint32(bad[packets[5]+20:], 1<<30) // captured length
	check("captured length", bad, 6)
}
