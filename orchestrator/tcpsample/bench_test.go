package tcpsample

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"

	"cclab/internal/runid"
	"cclab/internal/testnet"

	"github.com/vishvananda/netns"
)

// benchHosts builds 16 namespaces (8 pairs) carrying 20 connections paced
// at 5 Mbit/s each, spread over the pairs: 40 sockets to sample.
func benchHosts(b *testing.B) []Host {
	b.Helper()
	const pairs, conns = 8, 20
	var hosts []Host
	var ends [][2]testnet.End
	for i := range pairs {
		x, y := testnet.Pair(b)
		ends = append(ends, [2]testnet.End{x, y})
		hosts = append(hosts, Host{Name: fmt.Sprintf("h%d", 2*i), Netns: x.Netns}, Host{Name: fmt.Sprintf("h%d", 2*i+1), Netns: y.Netns})
	}
	for i := range conns {
		e := ends[i%pairs]
		c := connect(b, e[0], e[1], uint16(7200+i), "reno", "cubic", 625_000)
		c.pump()
		c.drain()
	}
	return hosts
}

// benchHostsOwnHash is benchHosts with namespaces that each have their own
// TCP established hash table of 1024 buckets instead of sharing the
// kernel's: made from a namespace whose net.ipv4.tcp_child_ehash_entries
// says so (a per-namespace setting, so nothing outside changes).
func benchHostsOwnHash(b *testing.B) []Host {
	b.Helper()
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		b.Fatal(err)
	}
	defer orig.Close()
	nursery := runid.New().Netns("nursery")
	h, err := netns.NewNamed(nursery) // moves this thread into it
	if err != nil {
		b.Fatal(err)
	}
	h.Close()
	defer netns.DeleteNamed(nursery)
	var hosts []Host
	if err = os.WriteFile("/proc/sys/net/ipv4/tcp_child_ehash_entries", []byte("1024"), 0); err == nil {
		hosts = benchHosts(b) // its namespaces are the nursery's children
	}
	if serr := netns.Set(orig); serr != nil {
		b.Fatal(serr) // the thread stays locked: the runtime drops it
	}
	runtime.UnlockOSThread()
	if err != nil {
		b.Fatal(err)
	}
	return hosts
}

// One sample of 16 hosts and 40 sockets through an open Sampler: what
// `cclab watch` pays every 100 ms.
func BenchmarkSampler16Hosts(b *testing.B) { benchSampler(b, benchHosts(b)) }

// The same with each namespace's own hash table: the dump no longer walks
// the kernel's shared one.
func BenchmarkSampler16HostsOwnHash(b *testing.B) { benchSampler(b, benchHostsOwnHash(b)) }

func benchSampler(b *testing.B, hosts []Host) {
	s, err := Open(hosts)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var n int
	for b.Loop() {
		got, err := s.Sample(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		n = len(got)
	}
	if n != 40 {
		b.Fatalf("%d flows, want 40", n)
	}
	b.ReportMetric(float64(n), "flows/op")
}

// The same sample opening and closing the 16 sockets each time (the
// one-shot Sample): what keeping them open saves.
func BenchmarkSampleOneShot16Hosts(b *testing.B) {
	hosts := benchHosts(b)
	for b.Loop() {
		if _, err := Sample(context.Background(), hosts); err != nil {
			b.Fatal(err)
		}
	}
}
