package tcpsample

import (
	"context"
	"fmt"
	"testing"
	"time"

	"cclab/internal/testnet"
	"cclab/orchestrator/flows"
)

// statesOf is each host's flows' states in one sample, e.g. "a:FIN-WAIT-1 b:ESTABLISHED".
func statesOf(t *testing.T, s *Sampler) string {
	t.Helper()
	got, err := s.Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := ""
	for _, f := range got {
		out += fmt.Sprintf(" %s:%s:%s", f.Host, f.State, f.CC)
	}
	return out
}

// waitStates samples until the flows' states are want, for up to 2 s.
func waitStates(t *testing.T, s *Sampler, want string) {
	t.Helper()
	var got string
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if got = statesOf(t, s); got == want {
			return
		}
	}
	t.Fatalf("states %q, want %q", got, want)
}

// A connection is sampled through the states in which it still moves data,
// and no longer once it carries none: a sender that closed with its buffer
// full still drains it in FIN-WAIT-1; the receiver that read to the end is
// in CLOSE-WAIT (the sender, orphaned in FIN-WAIT-2, is a minisock without
// tcp_info); after the receiver closes only TIME-WAIT is left, and listeners
// never count.
func TestClosingStates(t *testing.T) {
	a, b := testnet.Pair(t)
	s := openSampler(t, hostsOf(a, b))
	ln, err := flows.Listen(b.Netns, b.Addr, 7100) // LISTEN: not sampled
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	waitStates(t, s, "")

	c := connect(t, a, b, 7003, "reno", "cubic", 0)
	waitStates(t, s, " a:ESTABLISHED:reno b:ESTABLISHED:cubic")
	// Fill the send buffer (the receiver does not read) and close it full.
	c.pump()
	time.Sleep(100 * time.Millisecond)
	c.sender.Close()
	waitStates(t, s, " a:FIN-WAIT-1:reno b:ESTABLISHED:cubic")
	c.drain()
	waitStates(t, s, " b:CLOSE-WAIT:cubic")
	c.receiver.Close()
	waitStates(t, s, "")
}

// Namespaces without connections give no flows and no error.
func TestNoConnections(t *testing.T) {
	a, b := testnet.Pair(t)
	got, err := Sample(context.Background(), hostsOf(a, b))
	if err != nil || len(got) != 0 {
		t.Fatalf("got %v, %v; want no flows, no error", got, err)
	}
}
