package icmpecho

import (
	"context"
	"net/netip"
	"strings"
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
	// The stream measures the path, not the neighbour's resolution.
	if err := p.Reach(ctx, 100*time.Millisecond, 3*time.Second); err != nil {
		t.Fatal(err)
	}
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
	t.Logf("streamed: %d samples, %d lost, median %v, in %v; one at a time: %d samples, %d lost, median %v",
		st.Samples, st.Lost, time.Duration(st.P50Ns), took, one.Samples, one.Lost, time.Duration(one.P50Ns))
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

// Reach returns once the path answers, and fails with a clear error, after
// its limit, where nothing answers (an address no neighbour holds).
func TestReach(t *testing.T) {
	a, b := testnet.Pair(t)
	ctx := context.Background()
	p, err := New(a.Netns, a.Addr, b.Addr, 0xcaff)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Reach(ctx, 100*time.Millisecond, 3*time.Second); err != nil {
		t.Fatalf("reach %s: %v", b.Addr, err)
	}
	nobody := netip.MustParseAddr("198.18.0.3")
	q, err := New(a.Netns, a.Addr, nobody, 0xcb00)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	begin := time.Now()
	err = q.Reach(ctx, 50*time.Millisecond, 300*time.Millisecond)
	took := time.Since(begin)
	if err == nil || !strings.Contains(err.Error(), "no echo answered") {
		t.Fatalf("reach %s, which nobody holds: %v", nobody, err)
	}
	if took < 300*time.Millisecond || took > 2*time.Second {
		t.Errorf("gave up after %v, limit 300ms", took)
	}
}
