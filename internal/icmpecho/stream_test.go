package icmpecho

import (
	"context"
	"testing"
	"time"

	"cclab/internal/testnet"
)

// Streamed echoes over a real veth pair: every reply matched to its
// request, sent on the clock (not after each reply), with the median RTT
// of one-at-a-time echoes.
func TestStreamMatchesOneAtATime(t *testing.T) {
	a, b := testnet.Pair(t)
	p, err := New(a.Netns, a.Addr, b.Addr, 0xcafe)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	begin := time.Now()
	st, err := p.Stream(ctx, 200, time.Millisecond, 100*time.Millisecond)
	took := time.Since(begin)
	if err != nil {
		t.Fatal(err)
	}
	one, err := p.Sample(ctx, 200, 200*time.Microsecond, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("streamed: %d samples, %d lost, median %v, in %v; one at a time: median %v",
		st.Samples, st.Lost, time.Duration(st.P50Ns), took, time.Duration(one.P50Ns))
	if st.Samples != 200 || st.Lost != 0 {
		t.Fatalf("streamed: %d samples, %d lost of 200", st.Samples, st.Lost)
	}
	// 0.2 s of sending and the last reply; a second only if the machine
	// stalled.
	if took > time.Second {
		t.Errorf("200 echoes 1 ms apart took %v", took)
	}
	if d := time.Duration(st.P50Ns - one.P50Ns); d > 100*time.Microsecond || d < -100*time.Microsecond {
		t.Errorf("median %v streamed against %v one at a time", time.Duration(st.P50Ns), time.Duration(one.P50Ns))
	}
}
