package swunit

import (
	"bytes"
	"testing"

	"cclab/tcopt"
)

// decodeRecord reads the record bytes with the Go codec, the format's
// other implementation (tcopt/README.md).
func decodeRecord(t *testing.T, rec [7]byte) tcopt.Record {
	t.Helper()
	b, err := tcopt.Option{Slots: 1}.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	b[4] |= 1
	copy(b[tcopt.BaseLen:], rec[:])
	o, err := tcopt.Parse(b)
	if err != nil {
		t.Fatalf("parse the stamped record: %v", err)
	}
	return o.Records[0]
}

// The record's fields in their units, with qlen saturating and txBytes and
// ts wrapping (tcopt/README.md): as the Go codec reads and encodes them.
func TestRecordEncoding(t *testing.T) {
	const txWrap, tsWrap = 1 << 25, (1 << 18) * 256 // 32 MiB, ~67 ms
	for _, c := range []struct {
		rate             uint32
		qlen, tx, ts     uint64
		code             uint8
		wantQ, wantTx    uint32
		wantTS, wantRate uint32
	}{
		{1000, 0, 0, 0, 8, 0, 0, 0, 1000},
		{1000, 127, 127, 255, 8, 0, 0, 0, 1000},
		{100, 30000, 1_000_000, 5_000_000, 4, 30000 / 128 * 128, 1_000_000 / 128 * 128, 5_000_000 / 256 * 256, 100},
		{10000, 1 << 40, txWrap + 256, tsWrap + 512, 12, 32767 * 128, 256, 512, 10000},
		{25000, 32767 * 128, 3*txWrap - 128, 5*tsWrap - 256, 14, 32767 * 128, txWrap - 128, tsWrap - 256, 25000},
	} {
		rec := Record(c.rate, c.qlen, c.tx, c.ts)
		r := decodeRecord(t, rec)
		if r != tcopt.NewRecord(c.code, c.qlen, c.tx, c.ts) {
			t.Errorf("rate %d qlen %d tx %d ts %d: record %+v, Go codec %+v", c.rate, c.qlen, c.tx, c.ts, r, tcopt.NewRecord(c.code, c.qlen, c.tx, c.ts))
		}
		h, ok := r.Hop()
		if !ok || h.Qlen != c.wantQ || h.TxBytes != c.wantTx || h.TS != c.wantTS || h.RateMbps != c.wantRate {
			t.Errorf("rate %d qlen %d tx %d ts %d: hop %+v (ok %v), want qlen %d tx %d ts %d rate %d",
				c.rate, c.qlen, c.tx, c.ts, h, ok, c.wantQ, c.wantTx, c.wantTS, c.wantRate)
		}
	}
	// A port rate without a code stamps code 0: readers ignore the record.
	if _, ok := decodeRecord(t, Record(123, 1000, 1000, 1000)).Hop(); ok {
		t.Error("a rate without a code gave a valid record")
	}
}

// Wrap-around: across a wrap, the forward differences of two records are
// the true differences (tcopt.TxDelta, TSDelta).
func TestRecordWrapDelta(t *testing.T) {
	const txWrap, tsWrap = 1 << 25, (1 << 18) * 256
	tx0, ts0 := uint64(7*txWrap-3000*128), uint64(9*tsWrap-100*256)
	a, _ := decodeRecord(t, Record(1000, 0, tx0, ts0)).Hop()
	b, _ := decodeRecord(t, Record(1000, 0, tx0+9000*128, ts0+400*256)).Hop()
	if d := tcopt.TxDelta(b.TxBytes, a.TxBytes); d != 9000*128 {
		t.Errorf("txBytes delta across the wrap: %d, want %d", d, 9000*128)
	}
	if d := tcopt.TSDelta(b.TS, a.TS); d != 400*256 {
		t.Errorf("ts delta across the wrap: %d, want %d", d, 400*256)
	}
}

// The transmit clock: a packet takes len*8/rate, rounded up, from the
// later of its dequeue and the end of the one before.
func TestTxClock(t *testing.T) {
	if got := SerNs(1500, 1000); got != 12000 {
		t.Errorf("1500 B at 1 Gbit/s: %d ns, want 12000", got)
	}
	if got := SerNs(1, 3); got != 2667 {
		t.Errorf("1 B at 3 Mbit/s: %d ns, want 2667 (rounded up)", got)
	}
	if got := SerNs(1500, 0); got != 0 {
		t.Errorf("no rate: %d ns, want 0", got)
	}
	if got := TxDone(0, 1000, 12000); got != 13000 {
		t.Errorf("idle link: done %d, want 13000", got)
	}
	if got := TxDone(50000, 1000, 12000); got != 62000 {
		t.Errorf("busy link: done %d, want 62000 (after the one before)", got)
	}
	if got := WireLen(64000, 1448, 45, 66); got != 64000+44*66 {
		t.Errorf("GSO skb: %d bytes, want each segment's headers counted", got)
	}
	if got := WireLen(1514, 0, 1, 66); got != 1514 {
		t.Errorf("plain skb: %d, want its length", got)
	}
}

// forward builds an option area: leading NOPs, then an INT option of
// slots slots holding hops records.
func forward(t *testing.T, nops, slots, hops int, echo, overflow bool) []byte {
	t.Helper()
	o := tcopt.Option{Slots: slots, Echo: echo, Overflow: overflow}
	for i := 0; i < hops; i++ {
		o.Records = append(o.Records, tcopt.NewRecord(8, uint64(i)*128, 0, 0))
	}
	b, err := o.Append(bytes.Repeat([]byte{1}, nops))
	if err != nil {
		t.Fatal(err)
	}
	for len(b)%4 != 0 {
		b = append(b, 1)
	}
	return b
}

// The record goes into the next free slot, the hop count goes up, and
// nothing else changes; a full option gets its overflow flag once.
func TestWriteSlot(t *testing.T) {
	rec := Record(1000, 4096, 1<<20, 1<<20)
	for _, nops := range []int{0, 2, 3} {
		area := forward(t, nops, 3, 1, false, false)
		if off := FindOption(area); off != nops {
			t.Fatalf("%d NOPs: option at %d", nops, off)
		}
		got, res := Write(area, rec, true, false)
		if res != Written {
			t.Fatalf("%d NOPs: result %d, want written", nops, res)
		}
		o, err := tcopt.Parse(got[nops:])
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Records) != 2 || o.Records[1] != decodeRecord(t, rec) || o.Overflow {
			t.Errorf("%d NOPs: option %+v, want the record in slot 2", nops, o)
		}
		if !bytes.Equal(got[:nops+tcopt.BaseLen-1], area[:nops+tcopt.BaseLen-1]) ||
			!bytes.Equal(got[nops+tcopt.BaseLen+tcopt.RecLen*2:], area[nops+tcopt.BaseLen+tcopt.RecLen*2:]) {
			t.Errorf("%d NOPs: bytes outside the header and slot changed:\n%x\n%x", nops, area, got)
		}
	}

	full := forward(t, 0, 2, 2, false, false)
	got, res := Write(full, rec, true, false)
	if o, _ := tcopt.Parse(got); res != Full || !o.Overflow || len(o.Records) != 2 {
		t.Errorf("full option: result %d option %+v, want full and flagged", res, o)
	}
	if _, res := Write(got, rec, true, false); res != None {
		t.Errorf("full option flagged upstream: result %d, want none", res)
	}
	if got, res := Write(full, rec, false, false); res != Full || !bytes.Equal(got, full) {
		t.Errorf("full, not to flag: result %d, changed %v", res, !bytes.Equal(got, full))
	}
}

// Only the direction asked for is written (forward stamps, echo QCN
// feedback), and nothing is written into an option that is not ours or
// follows a malformed one.
func TestWriteRefuses(t *testing.T) {
	rec := Record(1000, 0, 0, 0)
	if _, res := Write(forward(t, 0, 2, 0, true, false), rec, true, false); res != None {
		t.Errorf("echo option, stamping forward: result %d, want none", res)
	}
	if _, res := Write(forward(t, 0, 2, 0, false, false), rec, false, true); res != None {
		t.Errorf("forward option, writing an echo: result %d, want none", res)
	}
	if _, res := Write(forward(t, 0, 2, 1, true, false), rec, false, true); res != Written {
		t.Errorf("echo with a free slot: result %d, want written", res)
	}
	bad := forward(t, 0, 2, 0, false, false)
	bad[3] ^= 1 // another ExID
	if _, res := Write(bad, rec, true, false); res != None || FindOption(bad) != -1 {
		t.Errorf("foreign ExID: result %d, found at %d", res, FindOption(bad))
	}
	// A malformed option (length 1) before ours hides it; EOL ends the area.
	hidden := append([]byte{8, 1, 1, 1}, forward(t, 0, 2, 0, false, false)...)
	eol := append([]byte{0, 1, 1, 1}, forward(t, 0, 2, 0, false, false)...)
	for name, area := range map[string][]byte{"malformed": hidden, "EOL": eol} {
		if off := FindOption(area); off != -1 {
			t.Errorf("%s option first: found at %d, want none", name, off)
		}
	}
	// A timestamp option before ours is skipped by its length.
	ts := append([]byte{1, 1, 8, 10, 0, 0, 0, 0, 0, 0, 0, 0}, forward(t, 0, 2, 0, false, false)...)
	if off := FindOption(ts); off != 12 {
		t.Errorf("after a timestamp option: found at %d, want 12", off)
	}
	over := forward(t, 0, 2, 0, false, false)
	over[4] = byte(tcopt.Version<<6) | 3 // 3 hops in 2 slots
	if _, res := Write(over, rec, true, false); res != None {
		t.Errorf("hops beyond slots: result %d, want none", res)
	}
}

// TCD (INT v1): with TCD off a v0 option stays v0 and a v1 one v1, U kept;
// with TCD on the header becomes v1, U set by an undetermined port and
// kept once set upstream; a full option still takes U (with its overflow
// flag), and one already flagged with both is left alone.
func TestWriteTCD(t *testing.T) {
	rec := Record(1000, 4096, 1<<20, 1<<20)
	v1 := func(hops int, ue bool) []byte {
		b := forward(t, 0, 3, hops, false, false)
		o, err := tcopt.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		o.Version, o.Undetermined = tcopt.V1, ue
		enc, err := o.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return append(enc, b[len(enc):]...)
	}
	for _, c := range []struct {
		name    string
		area    []byte
		tcd     StampTCD
		version uint8
		ue      bool
	}{
		{"v0, TCD off", forward(t, 0, 3, 1, false, false), TCDOff, tcopt.Version, false},
		{"v1, TCD off", v1(1, false), TCDOff, tcopt.V1, false},
		{"v1 with U, TCD off", v1(1, true), TCDOff, tcopt.V1, true},
		{"v0, TCD on", forward(t, 0, 3, 1, false, false), TCDOn, tcopt.V1, false},
		{"v0, undetermined port", forward(t, 0, 3, 1, false, false), TCDUE, tcopt.V1, true},
		{"v1 with U, TCD on", v1(1, true), TCDOn, tcopt.V1, true},
		{"v1, undetermined port", v1(2, false), TCDUE, tcopt.V1, true},
	} {
		before, err := tcopt.Parse(c.area)
		if err != nil {
			t.Fatal(err)
		}
		got, res := WriteTCD(c.area, rec, true, false, c.tcd)
		o, err := tcopt.Parse(got)
		if res != Written || err != nil {
			t.Fatalf("%s: result %d, %v", c.name, res, err)
		}
		if o.Version != c.version || o.Undetermined != c.ue || len(o.Records) != len(before.Records)+1 ||
			o.Records[len(o.Records)-1] != decodeRecord(t, rec) || o.Overflow {
			t.Errorf("%s: option %+v, want version %d U %v and the record appended", c.name, o, c.version, c.ue)
		}
	}
	full := forward(t, 0, 2, 2, false, false)
	got, res := WriteTCD(full, rec, true, false, TCDUE)
	if o, _ := tcopt.Parse(got); res != Full || !o.Overflow || !o.Undetermined || o.Version != tcopt.V1 || len(o.Records) != 2 {
		t.Errorf("full option at an undetermined port: result %d option %+v, want full, flagged, U", res, o)
	}
	if _, res := WriteTCD(got, rec, true, false, TCDUE); res != None {
		t.Errorf("full option flagged with O and U upstream: result %d, want none", res)
	}
	flagged, _ := WriteTCD(full, rec, true, false, TCDOn)
	if got, res := WriteTCD(flagged, rec, true, false, TCDUE); res != Full {
		t.Errorf("full option flagged O upstream, U here: result %d, want full", res)
	} else if o, _ := tcopt.Parse(got); !o.Undetermined {
		t.Errorf("full option flagged O upstream, U here: %+v, want U", o)
	}
	// An unknown version is not ours to write.
	bad := forward(t, 0, 3, 1, false, false)
	bad[4] |= 0x80
	if _, res := WriteTCD(bad, rec, true, false, TCDUE); res != None {
		t.Errorf("version 2: result %d, want none", res)
	}
}
