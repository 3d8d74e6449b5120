package tcpsample

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"testing"

	"cclab/internal/testnet"

	"github.com/vishvananda/netns"
)

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// A namespace deleted under an open Sampler fails the sample, naming the
// host and the namespace; the Sampler's socket no longer answers for it.
func TestVanishedNamespace(t *testing.T) {
	a, b := testnet.Pair(t)
	s := openSampler(t, hostsOf(a, b))
	if err := netns.DeleteNamed(b.Netns); err != nil {
		t.Fatal(err)
	}
	got, err := s.Sample(context.Background())
	if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "host b (netns "+b.Netns+")") || !strings.Contains(err.Error(), "gone") {
		t.Fatalf("got %v, %v; want an error saying host b's namespace %s is gone", got, err, b.Netns)
	}
	if got != nil {
		t.Errorf("flows %v with the error; want none", got)
	}
	t.Log(err)
}

// A namespace deleted and made again under the same name is not the one the
// Sampler's socket lists: the sample fails rather than report the old one.
func TestReplacedNamespace(t *testing.T) {
	a, b := testnet.Pair(t)
	s := openSampler(t, hostsOf(a, b))
	if err := netns.DeleteNamed(b.Netns); err != nil {
		t.Fatal(err)
	}
	func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		orig, err := netns.Get()
		if err != nil {
			t.Fatal(err)
		}
		defer orig.Close()
		h, err := netns.NewNamed(b.Netns) // moves this thread into it
		if err != nil {
			t.Fatal(err)
		}
		h.Close()
		if err := netns.Set(orig); err != nil {
			t.Fatal(err)
		}
	}()
	_, err := s.Sample(context.Background())
	if err == nil || !strings.Contains(err.Error(), b.Netns) || !strings.Contains(err.Error(), "replaced") {
		t.Fatalf("got %v; want an error saying %s was replaced", err, b.Netns)
	}
	t.Log(err)
}

// Hosts that cannot be sampled are refused with an error naming the
// culprit, and nothing stays open.
func TestBadHosts(t *testing.T) {
	a, b := testnet.Pair(t)
	missing := a.Netns + "-none"
	for _, tc := range []struct {
		hosts []Host
		want  string
	}{
		{[]Host{{Name: "a", Netns: a.Netns}, {Name: "x", Netns: missing}}, "host x: open netns " + missing},
		{[]Host{{Name: "a", Netns: a.Netns}, {Name: "a", Netns: b.Netns}}, "host a: listed twice"},
		{[]Host{{Name: "a", Netns: a.Netns}, {Name: "b", Netns: a.Netns}}, "host b: netns " + a.Netns + " already belongs"},
		{[]Host{{Name: "", Netns: a.Netns}}, "no name"},
		{[]Host{{Name: "a", Netns: "../" + a.Netns}}, "not a namespace name"},
		{[]Host{{Name: "a", Netns: ""}}, "not a namespace name"},
	} {
		before := openFDs(t)
		got, err := Sample(context.Background(), tc.hosts)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: got %v, %v; want an error with %q", tc.hosts, got, err, tc.want)
		}
		if after := openFDs(t); after != before {
			t.Errorf("%v: %d file descriptors open after the refusal, %d before", tc.hosts, after, before)
		}
	}
}

// A cancelled context stops a sample.
func TestCancelledSample(t *testing.T) {
	a, b := testnet.Pair(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Sample(ctx, hostsOf(a, b)); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

// A closed Sampler refuses to sample, and closing it again is harmless.
func TestClosedSampler(t *testing.T) {
	a, b := testnet.Pair(t)
	s, err := Open(hostsOf(a, b))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	if got, err := s.Sample(context.Background()); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("got %v, %v; want an error saying the sampler is closed", got, err)
	}
}
