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

// TestMalformedForwardIgnored: broken forward options injected on data
// segments (raw socket, from the sender's namespace) are counted and not
// kept by the receiver's agent (its storage, which its echoes copy, keeps
// the last valid one); a valid forward option injected the same way is
// kept verbatim.
func TestMalformedForwardIgnored(t *testing.T) {
	const port = 5050
	w := newWarmConn(t, port, 16<<10, atReceiver)
	a, p, srv, cport := w.a, w.p, w.srv, w.cport
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var err error
	srvFd := fdOf(t, srv)
	raw := rawSocket(t, p.snd)

	stored := func() []byte {
		var f fwdStore
		if err := a.objs.CclabIntFwd.Lookup(int32(srvFd), &f); err != nil {
			t.Fatalf("receiver's forward storage: %v", err)
		}
		return append([]byte(nil), f.Opt[:f.Len]...)
	}
	last := w.quietAck(ctx, t, nil)

	hdr, r := optHdr, rec(t, tcopt.NewRecord(8, 1500, 3000, 4000))
	valid, _ := tcopt.Option{Slots: 2, Records: []tcopt.Record{tcopt.NewRecord(12, 0, 1, 2), tcopt.NewRecord(14, 3, 4, 5)}}.Marshal()
	seq := last.Ack + 5000
	for _, tc := range []struct {
		name    string
		options []byte
		keep    bool
	}{
		{"hop count beyond slots", append(hdr(12, 2), r...), false},
		{"length not 5+7n", append(hdr(11, 0), 1, 2, 3, 4, 5, 6), false},
		{"version 2", append(hdr(12, 0x80|1), r...), false},
		{"truncated", append(append([]byte{1, 1}, hdr(40, 1)...), r...), false},
		{"valid", valid, true},
	} {
		before := stored()
		m0, _ := a.Stats()
		ip := pkt.Build(pkt.Segment{Src: p.sndIP, Dst: p.rcvIP, SPort: cport, DPort: port,
			Seq: seq, Ack: last.Seq, Flags: pkt.ACK, Window: 1000, Options: tc.options, Payload: bytes.Repeat([]byte{'y'}, 10)})
		seq += 10
		if err := unix.Sendto(raw, ip, 0, &unix.SockaddrInet4{Addr: p.rcvIP.As4()}); err != nil {
			t.Fatal(err)
		}
		var st tcopt.Option
		var got []byte
		for i := 0; i < 100; i++ {
			got = stored()
			m, _ := a.Stats()
			if tc.keep && bytes.Equal(got, tc.options) || !tc.keep && m.Malformed == m0.Malformed+1 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		m, _ := a.Stats()
		switch {
		case tc.keep:
			if !bytes.Equal(got, tc.options) {
				t.Fatalf("%s: receiver keeps %x, want %x", tc.name, got, tc.options)
			}
			if st, err = tcopt.Parse(got); err != nil || len(st.Hops()) != 2 {
				t.Fatalf("%s: kept %+v %v", tc.name, st, err)
			}
		case m.Malformed != m0.Malformed+1 || !bytes.Equal(got, before):
			t.Fatalf("%s: malformed %d -> %d, storage %x -> %x", tc.name, m0.Malformed, m.Malformed, before, got)
		}
	}
}

// fwdStore is the receiver's forward storage, struct int_fwd of agent.bpf.c.
type fwdStore struct {
	Len uint8
	Opt [tcopt.MaxLen]byte
	UE  uint8
}

// TestEchoORsUndetermined: TCD's U reaches the sender even when the
// receiver's delayed ACK echoes only the newest forward option. Two small
// in-order data segments are injected (raw socket, from the sender's
// namespace) into a receiver in delayed-ACK mode: the first's forward
// option is v1 with U, the second's v0 without. The first ACK of them
// echoes U (a v1 header) even when it echoes the second's option, because
// the agent ORs U over the segments since its last echo; later echoes do
// not repeat it, and a third segment without U is echoed without U and in
// its own version (v0).
func TestEchoORsUndetermined(t *testing.T) {
	const port = 5060
	w := newWarmConn(t, port, 16<<10, atReceiver)
	p, srv, cport := w.p, w.srv, w.cport
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	raw := rawSocket(t, p.snd)
	last := w.quietAck(ctx, t, nil)
	// Delayed ACKs (pingpong mode): two 10-byte segments are acknowledged
	// together, about 40 ms later.
	if err := unix.SetsockoptInt(fdOf(t, srv), unix.IPPROTO_TCP, unix.TCP_QUICKACK, 0); err != nil {
		t.Fatal(err)
	}

	r1, r2 := tcopt.NewRecord(8, 1500, 3000, 4000), tcopt.NewRecord(12, 0, 1, 2)
	fwd := func(o tcopt.Option) []byte {
		b, err := o.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	segs := [][]byte{
		fwd(tcopt.Option{Version: tcopt.V1, Undetermined: true, Slots: 2, Records: []tcopt.Record{r1}}),
		fwd(tcopt.Option{Slots: 2, Records: []tcopt.Record{r1, r2}}),
	}
	seq := last.Ack
	inject := func(options []byte) {
		ip := pkt.Build(pkt.Segment{Src: p.sndIP, Dst: p.rcvIP, SPort: cport, DPort: port,
			Seq: seq, Ack: last.Seq, Flags: pkt.ACK, Window: 1000, Options: options, Payload: bytes.Repeat([]byte{'u'}, 10)})
		seq += 10
		if err := unix.Sendto(raw, ip, 0, &unix.SockaddrInet4{Addr: p.rcvIP.As4()}); err != nil {
			t.Fatal(err)
		}
	}
	// The receiver's echoes acknowledging up to ack, once one reaches it.
	echoesUpTo := func(ack uint32) []tcopt.Option {
		var got []tcopt.Option
		err := w.capt.Wait(ctx, func(frames []pkt.Frame) bool {
			got = got[:0]
			reached := false
			for _, f := range frames {
				s, err := pkt.Parse(f.IP())
				if err != nil || !f.Outgoing || s.SPort != port || len(s.Payload) != 0 ||
					!seqAfter(s.Ack, last.Ack) || seqAfter(s.Ack, ack) {
					continue
				}
				o, err := tcopt.Parse(tcopt.Find(s.Options))
				if err != nil || !o.Echo {
					t.Fatalf("ACK %d: no echo (%v)", s.Ack, err)
				}
				got = append(got, o)
				reached = reached || s.Ack == ack
			}
			return reached
		})
		if err != nil {
			t.Fatalf("no ACK of %d: %v", ack, err)
		}
		return got
	}
	for _, s := range segs {
		inject(s)
	}
	first := echoesUpTo(seq)
	// The first echo after the U segment has U; it is the newest option's
	// (both records) when one ACK took both segments, as delayed ACKs do.
	if o := first[0]; o.Version != tcopt.V1 || !o.Undetermined {
		t.Errorf("the first ACK after the U segment echoes %+v: want v1 with U", o)
	} else if len(o.Records) == 2 {
		t.Logf("one ACK took both segments: U OR-ed into the newest option's echo")
	}
	// Once echoed, U is not repeated.
	for _, o := range first[1:] {
		if o.Undetermined {
			t.Errorf("a later ACK echoes U again: %+v", o)
		}
	}
	inject(fwd(tcopt.Option{Slots: 2, Records: []tcopt.Record{r2}}))
	after := echoesUpTo(seq)[len(first):]
	if len(after) == 0 {
		t.Fatal("no ACK of the third segment")
	}
	for _, o := range after {
		if o.Version != tcopt.Version || o.Undetermined || len(o.Records) != 1 {
			t.Errorf("the ACK of a segment without U, after U was echoed, echoes %+v: want v0, 1 record", o)
		}
	}
}

// seqAfter: sequence number a is after b, modulo 2^32.
func seqAfter(a, b uint32) bool { return int32(a-b) > 0 }
