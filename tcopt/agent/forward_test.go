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
}
