package law

import (
	"testing"
)

// benchAcks is a one-hop, 10 Gbit/s path with a moving queue, as ACKs.
func benchAcks() []Ack {
	var acks []Ack
	var tx uint64
	for i := 0; i < 1000; i++ {
		t := uint64(i+1) * 5000
		tx += 5000 * 1250 * uint64(16+i%5) / 20 / 1000
		acks = append(acks, Ack{NowNs: t, AckedBytes: 1448, MSS: 1448, RTTus: uint32(50 + i%20),
			SndUna: uint32(1448 * (i + 1)), SndNxt: uint32(1448*(i+1) + 60000), ECEBytes: uint32(i % 2 * 1448),
			Echo: &Echo{ArrivedNs: t, Count: uint32(i + 1), Hops: []Hop{{
				Qlen: uint32(i%50) * 500, TxBytes: uint32(tx % TxWrap), Ts: uint32(t % TsWrap), RateMbps: 10000}}}})
	}
	return acks
}

// BenchmarkOnAck measures one <law>_on_ack in C, ACKs fed in batches of
// 1000 so the cgo call is amortised: the law's own cost per ACK.
func BenchmarkOnAck(b *testing.B) {
	batch, err := NewAckBatch(benchAcks())
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range Laws() {
		l, _ := ParseLaw(name)
		b.Run(name, func(b *testing.B) {
			p, err := DefaultParams(l)
			if err != nil {
				b.Fatal(err)
			}
			c, _, err := NewController(p, 0, 1448)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for done := 0; done < b.N; done += batch.Len() {
				c.OnAckBatch(batch)
			}
		})
	}
}
