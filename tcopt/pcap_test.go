package tcopt

import (
	"encoding/binary"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"cclab/tcopt/internal/pkt"
)

// sample is one packet of the test pcap and the option it carries.
type sample struct {
	opt     Option
	tsOpt   bool // a TCP timestamps option precedes ours
	foreign bool // another experiment's option (ExID 0xCC1B) instead of ours
}

func samples() []sample {
	var ss []sample
	rec := func(i int) Record {
		return NewRecord(RateCode([]uint32{1000, 10000, 25000, 100000, 400000}[i%5]),
			uint64(i)*1500+300, uint64(i)<<24+12345, uint64(i)*1e9+777)
	}
	recs := func(n int) []Record {
		var rs []Record
		for i := 0; i < n; i++ {
			rs = append(rs, rec(i+1))
		}
		return rs
	}
	for hops := 0; hops <= MaxHops; hops++ {
		ss = append(ss, sample{opt: Option{Slots: MaxHops, Records: recs(hops)}})
	}
	ss = append(ss,
		sample{opt: Option{Slots: MaxHops, Overflow: true, Records: recs(MaxHops)}},
		sample{opt: Option{Echo: true, Slots: 0}},
		sample{opt: Option{Echo: true, Slots: 3, Records: recs(3)}},
		sample{opt: Option{Echo: true, Overflow: true, Slots: 2, Records: recs(2)}},
		sample{opt: Option{Slots: 3, Records: recs(1)}, tsOpt: true},
		sample{opt: Option{Slots: 2, Records: []Record{{Rate: 0, Qlen: 1}, {Rate: 25, Qlen: 2}}}},
		// v1 (TCD): U with 4 hops is 0x4c, which a v0 reader would take for 12 hops.
		sample{opt: Option{Version: V1, Undetermined: true, Slots: MaxHops, Records: recs(4)}},
		sample{opt: Option{Version: V1, Slots: MaxHops, Records: recs(2)}},
		sample{opt: Option{Version: V1, Echo: true, Undetermined: true, Slots: 3, Records: recs(3)}},
		sample{foreign: true},
	)
	return ss
}

// writePcap writes the samples as Ethernet frames, one TCP segment each.
func writePcap(t *testing.T, ss []sample) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "int.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(65536, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	src, dst := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	seq := uint32(1)
	for i, s := range ss {
		var opts []byte
		if s.tsOpt {
			opts = []byte{1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2}
		}
		if s.foreign {
			opts = append(opts, 253, 8, 0xcc, 0x1b, 1, 2, 3, 4)
		} else {
			b, err := s.opt.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			opts = append(opts, b...)
		}
		for len(opts)%4 != 0 {
			opts = append(opts, 1) // NOP, as the kernel pads
		}
		// One consistent connection, so that TCP analysis has nothing to
		// warn about: data from src, ACKs with echoes from dst.
		seg := pkt.Segment{Src: src, Dst: dst, SPort: 40000, DPort: 5001,
			Seq: seq, Ack: 1, Flags: pkt.ACK, Window: 512, Options: opts}
		if s.opt.Echo {
			seg.Src, seg.Dst, seg.SPort, seg.DPort, seg.Seq, seg.Ack = dst, src, 5001, 40000, 1, seq
		} else {
			seg.Payload = make([]byte, 100)
			seq += 100
		}
		ip := pkt.Build(seg)
		frame := make([]byte, 14, 14+len(ip))
		copy(frame[0:6], []byte{2, 0, 0, 0, 0, 2})
		copy(frame[6:12], []byte{2, 0, 0, 0, 0, 1})
		binary.BigEndian.PutUint16(frame[12:], 0x0800)
		frame = append(frame, ip...)
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(1700000000, int64(i)*1000), CaptureLength: len(frame), Length: len(frame)}
		if err := w.WritePacket(ci, frame); err != nil {
			t.Fatal(err)
		}
	}
	return path
}
