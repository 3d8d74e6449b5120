package tcopt

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"
)

// FuzzParse: Parse never panics, never reads past its input (the fuzzer
// hands it exactly-sized slices, so an overread would panic), and whatever
// it accepts re-encodes to the same bytes.
func FuzzParse(f *testing.F) {
	for _, o := range []Option{
		{},
		{Slots: 5, Records: []Record{{8, 1, 2, 3}, {12, 4, 5, 6}}},
		{Echo: true, Overflow: true, Slots: 3, Records: make([]Record, 3)},
		{Version: V1, Undetermined: true, Slots: 4, Records: []Record{{8, 1, 2, 3}}},
	} {
		b, err := o.Marshal()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{253, 12, 0xcc, 0x1a, 0x0f, 1, 2, 3, 4, 5, 6, 7})
	f.Fuzz(checkParse)
}

// TestParseRandom is a short fuzz run inside the normal tests: random
// options that start like ours, so that most get past the framing checks.
func TestParseRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 200000; i++ {
		b := make([]byte, rng.IntN(48))
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		if len(b) > 4 && rng.IntN(4) != 0 {
			b[0], b[2], b[3] = Kind, 0xcc, 0x1a
			b[1] = byte(BaseLen + RecLen*rng.IntN(7))
			b[4] &^= 0x80 // versions 0 and 1
		}
		checkParse(t, b)
	}
}

func checkParse(t *testing.T, b []byte) {
	{
		b = b[:len(b):len(b)]
		o, err := Parse(b)
		if err != nil {
			return
		}
		if len(o.Records) > o.Slots || o.Slots > MaxHops {
			t.Fatalf("accepted %x as %+v", b, o)
		}
		enc, err := o.Marshal()
		if err != nil {
			t.Fatalf("re-encode %+v: %v", o, err)
		}
		// Unused slots are not part of the value: compare up to the records.
		n := BaseLen + len(o.Records)*RecLen
		if len(enc) != int(b[1]) || !bytes.Equal(enc[:n], b[:n]) {
			t.Fatalf("re-encoded %x as %x", b[:b[1]], enc)
		}
		for _, h := range o.Hops() {
			if RateCode(h.RateMbps) == 0 {
				t.Fatalf("hop with invalid rate %+v", h)
			}
		}
	}
}

// FuzzRoundTrip: decode(encode(x)) == x for every valid x.
func FuzzRoundTrip(f *testing.F) {
	f.Add(uint8(5), uint8(2), true, false, uint64(0x0123456789abcd), uint64(0xfedcba98765432))
	f.Add(uint8(0), uint8(0), false, false, uint64(0), uint64(0))
	f.Fuzz(func(t *testing.T, slots, hops uint8, echo, ovfl bool, a, b uint64) {
		s := int(slots % (MaxHops + 1))
		h := int(hops) % (s + 1)
		o := Option{Echo: echo, Overflow: ovfl, Slots: s}
		// Half the options are v1, U from a bit of a.
		if hops&0x80 != 0 {
			o.Version, o.Undetermined = V1, a&1 != 0
		}
		for i := 0; i < h; i++ {
			v := a ^ b*uint64(i+1)
			o.Records = append(o.Records, Record{
				Rate: uint8(v>>51) % (RateCodeMax + 1),
				Qlen: uint16(v>>36) & QlenMax,
				Tx:   uint32(v>>18) & TxMask,
				TS:   uint32(v) & TSMask,
			})
		}
		enc, err := o.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		got, err := Parse(enc)
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		if !reflect.DeepEqual(got, o) {
			t.Fatalf("%+v -> %x -> %+v", o, enc, got)
		}
		// Find locates it in an options area padded like the kernel does.
		area := append(append([]byte{1, 1}, enc...), 0, 0, 0)
		if !bytes.Equal(Find(area), enc) {
			t.Fatalf("Find lost %x in %x", enc, area)
		}
	})
}
