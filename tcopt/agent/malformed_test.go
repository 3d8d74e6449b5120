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

func rec(t *testing.T, r tcopt.Record) []byte {
	t.Helper()
	b, err := tcopt.Option{Slots: 1, Records: []tcopt.Record{r}}.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b[tcopt.BaseLen:]
}

func opt(hdr ...[]byte) []byte { return bytes.Join(hdr, nil) }

// optHdr is the head of a cclab INT option of length l with header byte h
// (whatever l and h say, for malformed ones).
func optHdr(l, h byte) []byte { return []byte{tcopt.Kind, l, 0xcc, 0x1a, h} }

// TestMalformedEchoesIgnored injects ACKs carrying broken INT options into
// a live connection from the receiver's namespace with a raw socket: they
// arrive byte for byte, and the sender's agent ignores them (counters say
// why, socket storage unchanged), while a valid one injected the same way
// is taken.
func TestMalformedEchoesIgnored(t *testing.T) {
	const port = 5020
	w := newWarmConn(t, port, 64<<10, atSender)
	a, p, capt, cport := w.a, w.p, w.capt, w.cport
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fd := fdOf(t, w.c)

	// Wait until the connection is quiet and the sender has its echoes;
	// the receiver's last ACK gives the sequence numbers to inject with.
	var before Echo
	last := w.quietAck(ctx, t, func() bool {
		e, ok, _ := a.Echo(fd)
		same := ok && e == before
		before = e
		return same
	})
	if before.Count == 0 {
		t.Fatalf("no echoes on a quiet connection: %+v", before)
	}
	raw := rawSocket(t, p.rcv)

	good := tcopt.NewRecord(tcopt.RateCode(1000), 10*1500, 123456, 987654321)
	good2 := tcopt.NewRecord(tcopt.RateCode(25000), 0, 1<<30, 5e9)
	bad0 := tcopt.Record{Rate: 0, Qlen: 5, Tx: 5, TS: 5}
	bad25 := tcopt.Record{Rate: 25, Qlen: 5, Tx: 5, TS: 5}
	hdr := optHdr
	echo := byte(tcopt.HdrEcho)

	cases := []struct {
		name    string
		options []byte
		delta   Stats // expected counter change
		taken   []tcopt.Hop
	}{
		{"foreign ExID", opt([]byte{253, 12, 0xcc, 0x1b, echo | 1}, rec(t, good)), Stats{}, nil},
		{"truncated", opt([]byte{1, 1}, hdr(40, echo|1), rec(t, good)), Stats{Malformed: 1}, nil},
		{"length not 5+7n", opt(hdr(10, echo), []byte{1, 2, 3, 4, 5}), Stats{Malformed: 1}, nil},
		{"length 4", []byte{253, 4, 0xcc, 0x1a}, Stats{Malformed: 1}, nil},
		{"hop count beyond slots", opt(hdr(12, echo|3), rec(t, good)), Stats{Malformed: 1}, nil},
		{"hop count 15", opt(hdr(19, echo|15), rec(t, good), rec(t, good)), Stats{Malformed: 1}, nil},
		{"version 2", opt(hdr(12, echo|0x80|1), rec(t, good)), Stats{Malformed: 1}, nil},
		{"version 3", opt(hdr(12, echo|0xc0|1), rec(t, good)), Stats{Malformed: 1}, nil},
		// v1 (TCD) with U and 2 hops: 0x6a, which v0 would read as 10 hops.
		{"v1 with U", opt(hdr(19, echo|0x40|tcopt.HdrUE|2), rec(t, good), rec(t, good2)), Stats{EchoesParsed: 1}, hops(t, good, good2)},
		{"v1 without U", opt(hdr(12, echo|0x40|1), rec(t, good2)), Stats{EchoesParsed: 1}, hops(t, good2)},
		{"bad rate codes", opt(hdr(19, echo|2), rec(t, bad0), rec(t, bad25)), Stats{BadRecords: 2}, nil},
		{"valid", opt(hdr(19, echo|2), rec(t, good), rec(t, good2)), Stats{EchoesParsed: 1}, hops(t, good, good2)},
		{"one bad record", opt(hdr(26, echo|tcopt.HdrOvfl|3), rec(t, bad25), rec(t, good2), rec(t, good)),
			Stats{EchoesParsed: 1, BadRecords: 1}, hops(t, good2, good)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st0, err := a.Stats()
			if err != nil {
				t.Fatal(err)
			}
			e0, _, _ := a.Echo(fd)
			ip := pkt.Build(pkt.Segment{Src: p.rcvIP, Dst: p.sndIP, SPort: port, DPort: cport,
				Seq: last.Seq, Ack: last.Ack, Flags: pkt.ACK, Window: last.Window, Options: tc.options})
			n0 := len(capt.Frames())
			if err := unix.Sendto(raw, ip, 0, &unix.SockaddrInet4{Addr: p.sndIP.As4()}); err != nil {
				t.Fatalf("inject: %v", err)
			}
			err = capt.Wait(ctx, func(frames []pkt.Frame) bool {
				for _, f := range frames[n0:] {
					if !f.Outgoing && bytes.Equal(f.IP(), ip) {
						return true
					}
				}
				return false
			})
			if err != nil {
				t.Fatalf("injected packet did not arrive unchanged: %v", err)
			}
			var st Stats
			var e Echo
			want := add(st0, tc.delta)
			// The agent runs as the packet is received: give it a moment.
			for i := 0; i < 50; i++ {
				st, _ = a.Stats()
				e, _, _ = a.Echo(fd)
				if st == want {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			if st != want {
				t.Fatalf("counters %+v, want %+v", st, want)
			}
			if tc.taken == nil {
				if e != e0 {
					t.Fatalf("storage changed from %+v to %+v", e0, e)
				}
				return
			}
			if e.Count != e0.Count+1 || int(e.NHops) != len(tc.taken) || e.ArrivedNs <= e0.ArrivedNs {
				t.Fatalf("storage %+v after %+v", e, e0)
			}
			for i, h := range tc.taken {
				if e.Hop[i] != h {
					t.Fatalf("hop %d = %+v, want %+v", i, e.Hop[i], h)
				}
			}
			wantFlags := tc.options[4] & tcopt.HdrOvfl
			if tc.options[4]>>6 == tcopt.V1 && tc.options[4]&tcopt.HdrUE != 0 {
				wantFlags |= EchoUE
			}
			if e.Flags != wantFlags {
				t.Fatalf("flags %#x, want %#x", e.Flags, wantFlags)
			}
		})
	}
}

func hops(t *testing.T, rs ...tcopt.Record) []tcopt.Hop {
	var hs []tcopt.Hop
	for _, r := range rs {
		h, ok := r.Hop()
		if !ok {
			t.Fatalf("record %+v invalid", r)
		}
		hs = append(hs, h)
	}
	return hs
}

func add(a, b Stats) Stats {
	return Stats{
		a.OptionsWritten + b.OptionsWritten, a.EchoesWritten + b.EchoesWritten,
		a.ForwardsParsed + b.ForwardsParsed, a.EchoesParsed + b.EchoesParsed,
		a.Malformed + b.Malformed, a.BadRecords + b.BadRecords,
		a.ReserveFailed + b.ReserveFailed, a.EchoesTruncated + b.EchoesTruncated,
	}
}
