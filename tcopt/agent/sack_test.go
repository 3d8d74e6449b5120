package agent

import (
	"bytes"
	"context"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cclab/tcopt"
	"cclab/tcopt/internal/pkt"
)

// TestEchoBesideSACK: a forward option with 5 records arrives on an
// out-of-order segment (injected with a raw socket), so the receiver's ACK
// carries a SACK block and has room for only 3 of the 5 echoed records. The
// echo keeps the first 3 with O set, and the sender's storage gets them.
//
// With QCNSlot (a run with QCN congestion points) the empty slot for a
// congestion point's feedback stays, zeroed, after the records, and a
// record goes instead: 2 records and the slot.
func TestEchoBesideSACK(t *testing.T) {
	t.Run("records", func(t *testing.T) { testEchoBesideSACK(t, 5040, Options{}, 3) })
	t.Run("qcn slot", func(t *testing.T) { testEchoBesideSACK(t, 5041, Options{QCNSlot: true}, 2) })
}

func testEchoBesideSACK(t *testing.T, port int, opts Options, keep int) {
	w := newWarmConnWith(t, port, 64<<10, atReceiver, opts)
	a, p, capt, c, cport := w.a, w.p, w.capt, w.c, w.cport
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var err error
	fd := fdOf(t, c)

	// The receiver's last ACK, once quiet, gives its rcv_nxt and snd_nxt.
	last := w.quietAck(ctx, t, nil)
	st0, _ := a.Stats()

	var recs []tcopt.Record
	for i, mbps := range []uint32{1000, 10000, 25000, 40000, 100000} {
		recs = append(recs, tcopt.NewRecord(tcopt.RateCode(mbps), uint64(i)*3000, uint64(i)<<20, uint64(i)*1e6))
	}
	fwd, err := tcopt.Option{Slots: 5, Records: recs}.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	ip := pkt.Build(pkt.Segment{Src: p.sndIP, Dst: p.rcvIP, SPort: cport, DPort: uint16(port),
		Seq: last.Ack + 10000, Ack: last.Seq, Flags: pkt.ACK | pkt.PSH, Window: 1000,
		Options: fwd, Payload: bytes.Repeat([]byte{'x'}, 100)})
	raw := rawSocket(t, p.snd)
	n0 := len(capt.Frames())
	if err := unix.Sendto(raw, ip, 0, &unix.SockaddrInet4{Addr: p.rcvIP.As4()}); err != nil {
		t.Fatal(err)
	}

	// The receiver answers the hole with a SACK and the shortened echo.
	var echo tcopt.Option
	var rawEcho []byte
	err = capt.Wait(ctx, func(frames []pkt.Frame) bool {
		for _, f := range frames[n0:] {
			s, err := pkt.Parse(f.IP())
			if err != nil || s.Src != p.rcvIP || !hasSACK(s.Options) {
				continue
			}
			rawEcho = tcopt.Find(s.Options)
			if echo, err = tcopt.Parse(rawEcho); err == nil {
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("no ACK with a SACK block and an echo: %v", err)
	}
	if !echo.Echo || !echo.Overflow || len(echo.Records) != keep || echo.Slots != 3 {
		t.Fatalf("echo beside SACK = %+v, want the first %d records in 3 slots with O set", echo, keep)
	}
	for i := range echo.Records {
		if echo.Records[i] != recs[i] {
			t.Fatalf("echoed record %d = %+v, want %+v", i, echo.Records[i], recs[i])
		}
	}
	// The slots after the records are empty (the QCN slot, zeroed).
	if b := rawEcho[tcopt.BaseLen+keep*tcopt.RecLen:]; !bytes.Equal(b, make([]byte, len(b))) {
		t.Fatalf("the slots after the %d records hold % x, want zeros", keep, b)
	}
	var e Echo
	err = capt.Wait(ctx, func([]pkt.Frame) bool {
		e, _, _ = a.Echo(fd)
		return int(e.NHops) == keep
	})
	if err != nil || e.Flags != tcopt.HdrOvfl {
		t.Fatalf("sender storage %+v (%v)", e, err)
	}
	for i := 0; i < keep; i++ {
		if h, _ := recs[i].Hop(); e.Hop[i] != h {
			t.Fatalf("stored hop %d = %+v, want %+v", i, e.Hop[i], h)
		}
	}
	st, _ := a.Stats()
	if st.EchoesTruncated <= st0.EchoesTruncated || st.ForwardsParsed <= st0.ForwardsParsed {
		t.Fatalf("counters %+v after %+v", st, st0)
	}
}

// hasSACK reports whether a TCP options area holds a SACK block option.
func hasSACK(opts []byte) bool {
	for i := 0; i < len(opts); {
		switch opts[i] {
		case 0:
			return false
		case 1:
			i++
			continue
		}
		if i+1 >= len(opts) || opts[i+1] < 2 {
			return false
		}
		if opts[i] == 5 {
			return true
		}
		i += int(opts[i+1])
	}
	return false
}
