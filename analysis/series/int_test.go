package series

import (
	"testing"
	"time"

	"cclab/tcopt"
)

// optionsArea pads an INT option with NOPs to a multiple of 4 bytes, as
// the kernel lays out TCP options, after a foreign option (MSS).
func optionsArea(t *testing.T, o tcopt.Option) []byte {
	t.Helper()
	b, err := o.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	area := append([]byte{2, 4, 0x05, 0xb4}, b...)
	for len(area)%4 != 0 {
		area = append(area, 1)
	}
	return area
}

func TestINTDecodesHopsPerWindow(t *testing.T) {
	n := NewINT(2, time.Millisecond)
	ms := int64(time.Millisecond)
	fwd := func(q0, q1 uint64) tcopt.Option {
		return tcopt.Option{Slots: 5, Records: []tcopt.Record{tcopt.NewRecord(8, q0, 0, 0), tcopt.NewRecord(12, q1, 0, 0)}}
	}
	n.Add(0, 10*ms+1, optionsArea(t, fwd(1280, 12800)))
	n.Add(0, 10*ms+2, optionsArea(t, fwd(2560, 128)))
	n.Add(0, 11*ms, optionsArea(t, fwd(0, 0)))
	echo := tcopt.Option{Echo: true, Slots: 3, Records: []tcopt.Record{tcopt.NewRecord(8, 640, 0, 0), {Rate: 0, Qlen: 7}}}
	n.Add(1, 10*ms, optionsArea(t, echo))
	// Our kind and ExID with a length that is not 5 + 7k: rejected whole.
	n.Add(1, 10*ms, []byte{253, 9, 0xcc, 0x1a, 0, 0, 0, 0, 0, 1, 1, 1})
	n.Add(1, 10*ms, []byte{2, 4, 5, 180}) // no INT option at all
	if s := n.Stats[0]; s.Packets != 3 || s.Forward != 3 || s.Echo != 0 || s.Records != 6 || s.Invalid != 0 {
		t.Fatalf("capture 0 stats %+v", s)
	}
	if s := n.Stats[1]; s.Packets != 1 || s.Echo != 1 || s.Records != 1 || s.Ignored != 1 || s.Invalid != 1 {
		t.Fatalf("capture 1 stats %+v", s)
	}
	qs := n.Queues()
	if len(qs) != 3 {
		t.Fatalf("%d hop series: %+v", len(qs), qs)
	}
	// Hop 0 of capture 0: max 2560 in window 10, 0 in window 11.
	h0 := qs[0]
	if h0.File != 0 || h0.Hop != 0 || len(h0.Points) != 2 || h0.Points[0].V != 2560 || h0.Points[0].T != 10*time.Millisecond || h0.Points[1].V != 0 {
		t.Fatalf("hop 0 %+v", h0)
	}
	if h1 := qs[1]; h1.Hop != 1 || h1.Points[0].V != 12800 {
		t.Fatalf("hop 1 %+v", h1)
	}
	if e := qs[2]; e.File != 1 || !e.Echo || e.Points[0].V != 640 {
		t.Fatalf("echo %+v", e)
	}
}

// A QCN congestion point's record takes a slot but is no hop: the hop
// records after it keep their path positions, and it is counted apart.
func TestINTSkipsQCNRecords(t *testing.T) {
	n := NewINT(1, time.Millisecond)
	o := tcopt.Option{Slots: 5, Records: []tcopt.Record{
		tcopt.NewQCNRecord(12, 3, 77, 90_000), tcopt.NewRecord(8, 1280, 0, 0), tcopt.NewRecord(8, 2560, 0, 0)}}
	n.Add(0, 0, optionsArea(t, o))
	if s := n.Stats[0]; s.Records != 2 || s.QCN != 1 || s.Ignored != 0 {
		t.Fatalf("stats %+v: want 2 hop records and 1 QCN record", s)
	}
	qs := n.Queues()
	if len(qs) != 2 || qs[0].Hop != 0 || qs[0].Points[0].V != 1280 || qs[1].Hop != 1 || qs[1].Points[0].V != 2560 {
		t.Fatalf("hop series %+v: want hops 0 and 1 at 1280 and 2560 bytes", qs)
	}
}
