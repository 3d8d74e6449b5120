package tcopt

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"testing"
)

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Byte-exact encodings worked out by hand from tcopt/README.md.
func TestRecordLayout(t *testing.T) {
	tests := []struct {
		name string
		r    Record
		hex  string
	}{
		{"zero", Record{}, "00000000000000"},
		{"rate only", Record{Rate: 1}, "08000000000000"},
		{"max rate code bits", Record{Rate: 31}, "f8000000000000"},
		{"qlen max", Record{Qlen: QlenMax}, "07fff000000000"},
		{"tx max", Record{Tx: TxMask}, "00000ffffc0000"},
		{"ts max", Record{TS: TSMask}, "0000000003ffff"},
		{"all max", Record{Rate: 31, Qlen: QlenMax, Tx: TxMask, TS: TSMask}, "ffffffffffffff"},
		{"mixed", Record{Rate: 8, Qlen: 3, Tx: 1, TS: 2}, "40003000040002"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := make([]byte, 7)
			tc.r.put(p)
			if got := hex.EncodeToString(p); got != tc.hex {
				t.Fatalf("encode %+v = %s, want %s", tc.r, got, tc.hex)
			}
			if got := getRecord(p); got != tc.r {
				t.Fatalf("decode %s = %+v, want %+v", tc.hex, got, tc.r)
			}
		})
	}
}

func TestNewRecordUnits(t *testing.T) {
	tests := []struct {
		name          string
		mbps          uint32
		qlen, tx, now uint64
		want          Record
		wantHop       Hop
		wantValid     bool
	}{
		{"1G small", 1000, 1500, 3000, 1000, Record{8, 11, 23, 3}, Hop{1408, 2944, 768, 1000}, true},
		{"qlen saturates", 100000, 10 << 20, 0, 0, Record{17, QlenMax, 0, 0}, Hop{QlenMax * 128, 0, 0, 100000}, true},
		{"tx wraps", 10000, 0, TxWrap + 256, 0, Record{12, 0, 2, 0}, Hop{0, 256, 0, 10000}, true},
		{"ts wraps", 10, 0, 0, TSWrap*3 + 512, Record{1, 0, 0, 2}, Hop{0, 0, 512, 10}, true},
		{"unlisted rate", 123, 0, 0, 0, Record{0, 0, 0, 0}, Hop{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRecord(RateCode(tc.mbps), tc.qlen, tc.tx, tc.now)
			if r != tc.want {
				t.Fatalf("NewRecord = %+v, want %+v", r, tc.want)
			}
			h, ok := r.Hop()
			if ok != tc.wantValid || h != tc.wantHop {
				t.Fatalf("Hop = %+v %v, want %+v %v", h, ok, tc.wantHop, tc.wantValid)
			}
		})
	}
}

func TestRateCodes(t *testing.T) {
	for c := uint8(1); c <= RateCodeMax; c++ {
		m, ok := RateMbps(c)
		if !ok || RateCode(m) != c {
			t.Fatalf("code %d: %d Mbit/s maps back to %d", c, m, RateCode(m))
		}
	}
	for _, c := range []uint8{0, 21, 31} {
		if _, ok := RateMbps(c); ok {
			t.Fatalf("code %d accepted", c)
		}
	}
}

func TestDeltasWrap(t *testing.T) {
	if d := TxDelta(128, TxWrap-128); d != 256 {
		t.Fatalf("TxDelta across wrap = %d", d)
	}
	if d := TSDelta(0, TSWrap-256); d != 256 {
		t.Fatalf("TSDelta across wrap = %d", d)
	}
}

func TestOptionRoundTrip(t *testing.T) {
	recs := []Record{{8, 1, 2, 3}, {12, 100, TxMask, TSMask}, {20, QlenMax, 0, 1}, {1, 0, 0, 0}, {17, 7, 7, 7}}
	for slots := 0; slots <= MaxHops; slots++ {
		for hops := 0; hops <= slots; hops++ {
			for _, flags := range []struct {
				version        uint8
				echo, ovfl, ue bool
			}{{0, false, false, false}, {0, true, false, false}, {0, false, true, false}, {0, true, true, false},
				{V1, false, false, false}, {V1, false, false, true}, {V1, true, false, true}, {V1, true, true, true}} {
				o := Option{Version: flags.version, Echo: flags.echo, Overflow: flags.ovfl, Undetermined: flags.ue, Slots: slots}
				if hops > 0 {
					o.Records = recs[:hops]
				}
				b, err := o.Marshal()
				if err != nil {
					t.Fatal(err)
				}
				if len(b) != 5+7*slots || b[1] != byte(len(b)) {
					t.Fatalf("%+v: length %d, len byte %d", o, len(b), b[1])
				}
				got, err := Parse(b)
				if err != nil {
					t.Fatalf("%+v: %v", o, err)
				}
				if !reflect.DeepEqual(got, o) {
					t.Fatalf("round trip %+v -> %x -> %+v", o, b, got)
				}
			}
		}
	}
}

func TestOptionHeaderBytes(t *testing.T) {
	o := Option{Echo: true, Overflow: true, Slots: 3, Records: []Record{{8, 0, 0, 0}, {8, 0, 0, 0}, {8, 0, 0, 0}}}
	b, err := o.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if want := mustHex(t, "fd1acc1a33"); !bytes.Equal(b[:5], want) {
		t.Fatalf("header %x, want %x", b[:5], want)
	}
}

func TestParseRejects(t *testing.T) {
	good, err := Option{Slots: 2, Records: []Record{{8, 1, 1, 1}}}.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	mod := func(f func(b []byte) []byte) []byte {
		return f(append([]byte(nil), good...))
	}
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"one byte", []byte{253}, ErrTruncated},
		{"wrong kind", mod(func(b []byte) []byte { b[0] = 254; return b }), ErrNotINT},
		{"foreign ExID", mod(func(b []byte) []byte { b[3] = 0x1b; return b }), ErrNotINT},
		{"truncated", good[:len(good)-1], ErrTruncated},
		{"length not 5+7n", mod(func(b []byte) []byte { b[1] = 18; return b[:18] }), ErrLength},
		{"length beyond 40", append(mod(func(b []byte) []byte { b[1] = 47; return b }), make([]byte, 40)...), ErrLength},
		{"length 4", []byte{253, 4, 0xcc, 0x1a}, ErrLength},
		{"length 3", []byte{253, 3, 0xcc}, ErrLength},
		{"version 2", mod(func(b []byte) []byte { b[4] |= 0x80; return b }), ErrVersion},
		{"version 3", mod(func(b []byte) []byte { b[4] |= 0xc0; return b }), ErrVersion},
		{"hops beyond slots", mod(func(b []byte) []byte { b[4] = b[4]&^HopsMask | 3; return b }), ErrHops},
		{"hops 15", mod(func(b []byte) []byte { b[4] |= HopsMask; return b }), ErrHops},
		// v1: 3 hop bits; U set and 3 hops is 0x0b, which v0 would read as 11 hops.
		{"v1 hops beyond slots", mod(func(b []byte) []byte { b[4] = 0x40 | HdrUE | 3; return b }), ErrHops},
		{"v1 hops 7", mod(func(b []byte) []byte { b[4] = 0x40 | 7; return b }), ErrHops},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Parse(tc.b); !errors.Is(err, tc.want) {
				t.Fatalf("Parse(%x) = %v, want %v", tc.b, err, tc.want)
			}
		})
	}
}

func TestBadRecordsDropped(t *testing.T) {
	o := Option{Slots: 4, Records: []Record{{8, 1, 1, 1}, {0, 2, 2, 2}, {21, 3, 3, 3}, {20, 4, 4, 4}}}
	b, err := o.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	hs := p.Hops()
	if len(hs) != 2 || hs[0].Qlen != 128 || hs[1].Qlen != 512 || hs[1].RateMbps != 800000 {
		t.Fatalf("Hops = %+v, want the records with qlen 1 and 4 units", hs)
	}
}

// Version 1 (TCD): U sits where v0 has its highest hop bit; a v1 header
// with U and 2 hops is 0x4a, and the same option without U 0x42. The hop
// bits below U read the same in both versions.
func TestOptionV1(t *testing.T) {
	recs := []Record{{8, 1, 2, 3}, {12, 4, 5, 6}}
	for _, tc := range []struct {
		o   Option
		hdr byte
	}{
		{Option{Version: V1, Undetermined: true, Slots: 3, Records: recs}, 0x4a},
		{Option{Version: V1, Slots: 3, Records: recs}, 0x42},
		{Option{Version: V1, Echo: true, Overflow: true, Undetermined: true, Slots: 2, Records: recs}, 0x7a},
		{Option{Version: V1, Undetermined: true, Slots: 5}, 0x48},
		{Option{Slots: 3, Records: recs}, 0x02},
	} {
		b, err := tc.o.Marshal()
		if err != nil {
			t.Fatalf("%+v: %v", tc.o, err)
		}
		if b[4] != tc.hdr {
			t.Errorf("%+v: header %#02x, want %#02x", tc.o, b[4], tc.hdr)
		}
		got, err := Parse(b)
		if err != nil || !reflect.DeepEqual(got, tc.o) {
			t.Errorf("%+v -> %x -> %+v, %v", tc.o, b, got, err)
		}
	}
}

func TestEncodeRejects(t *testing.T) {
	if _, err := (Option{Undetermined: true, Slots: 1}).Marshal(); !errors.Is(err, ErrVersion) {
		t.Fatalf("U in a v0 header: %v", err)
	}
	if _, err := (Option{Version: 2, Slots: 1}).Marshal(); !errors.Is(err, ErrVersion) {
		t.Fatalf("version 2: %v", err)
	}
	if _, err := (Option{Slots: 6}).Marshal(); !errors.Is(err, ErrLength) {
		t.Fatalf("6 slots: %v", err)
	}
	if _, err := (Option{Slots: 1, Records: make([]Record, 2)}).Marshal(); !errors.Is(err, ErrHops) {
		t.Fatalf("2 records in 1 slot: %v", err)
	}
}

func TestFind(t *testing.T) {
	ours, _ := Option{Slots: 1, Records: []Record{{8, 1, 1, 1}}}.Marshal()
	foreign := []byte{253, 6, 0xcc, 0x1b, 0, 0}
	tests := []struct {
		name string
		opts []byte
		want []byte
	}{
		{"alone", ours, ours},
		{"after nops and mss", append([]byte{1, 1, 2, 4, 5, 0xb4}, ours...), ours},
		{"after foreign exid", append(append([]byte{}, foreign...), ours...), ours},
		{"behind eol", append([]byte{0}, ours...), nil},
		{"truncated", ours[:len(ours)-1], nil},
		{"zero length option before", append([]byte{8, 0}, ours...), nil},
		{"none", []byte{1, 1, 1}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Find(tc.opts); !bytes.Equal(got, tc.want) {
				t.Fatalf("Find(%x) = %x, want %x", tc.opts, got, tc.want)
			}
		})
	}
}
