package netbuild

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"cclab/internal/runid"
	"cclab/topology"

	"golang.org/x/sys/unix"
)

// A sysctl is written through /proc/sys, which resolves net.* in the
// namespace of the writing thread.
type sysctl struct {
	key, value string
	optional   bool    // skip when the kernel lacks the key (e.g. no IPv6)
	then       *sysctl // written after this one succeeded (and only then)
}

func (s sysctl) path() string {
	return "/proc/sys/" + strings.ReplaceAll(s.key, ".", "/")
}

func (s sysctl) write() error {
	f, err := os.OpenFile(s.path(), os.O_WRONLY, 0)
	if err != nil {
		if s.optional && os.IsNotExist(err) {
			return nil
		}
		return fmt.Errorf("sysctl %s: %w", s.key, err)
	}
	_, err = f.WriteString(s.value)
	cerr := f.Close()
	if err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sysctl %s=%s: %w", s.key, s.value, err)
	}
	if s.then != nil {
		return s.then.write()
	}
	return nil
}

// common sysctls: IPv6 off, so that captures hold no router solicitations
// or DAD; interfaces created afterwards inherit "default".
var common = []sysctl{
	{key: "net.ipv6.conf.all.disable_ipv6", value: "1", optional: true},
	{key: "net.ipv6.conf.default.disable_ipv6", value: "1", optional: true},
}

// switchSysctls turn a namespace into an L3 switch with ECMP on the L4
// 5-tuple.
//
// Hash policy 1 (L4) would reuse the sender's socket hash carried in the
// skb (skb->l4_hash, kept across veths), so every switch on the path makes
// the same choice and the fabric polarises: an edge switch's flows towards
// its first aggregation switch all leave that one by its first core link.
// Policy 3 hashes the listed fields instead (src/dst address, protocol,
// src/dst port: the same 5-tuple as policy 1), with a per-switch seed
// derived from the switch's name so runs are repeatable. Kernels without
// these sysctls (before 5.15 for the fields, 6.11 for the seed) fall back
// to policy 1 and polarise.
func switchSysctls(node string) []sysctl {
	h := fnv.New32a()
	h.Write([]byte(node))
	seed := h.Sum32() | 1 // 0 would mean "random"
	return append(append([]sysctl{}, common...),
		sysctl{key: "net.ipv4.ip_forward", value: "1"}, // 0 in a new namespace
		sysctl{key: "net.ipv4.fib_multipath_hash_policy", value: "1"},
		sysctl{key: "net.ipv4.fib_multipath_hash_fields", value: "0x37", optional: true},
		sysctl{key: "net.ipv4.fib_multipath_hash_seed", value: strconv.FormatUint(uint64(seed), 10), optional: true, then: &sysctl{key: "net.ipv4.fib_multipath_hash_policy", value: "3"}},
	)
}

func hostSysctls(opt Options) []sysctl {
	s := append([]sysctl{}, common...)
	s = append(s,
		sysctl{key: "net.ipv4.tcp_timestamps", value: boolStr(opt.TCPTimestamps)},
		sysctl{key: "net.ipv4.tcp_ecn", value: strconv.Itoa(opt.ECN)},
		sysctl{key: "net.ipv4.tcp_congestion_control", value: opt.DefaultCC},
	)
	if opt.InitRwnd > 0 {
		// the window offered is about half the buffer (the rest is
		// overhead), so twice the window, and room to grow past it
		def := 2 * opt.InitRwnd
		s = append(s, sysctl{key: "net.ipv4.tcp_rmem", value: fmt.Sprintf("4096 %d %d", def, max(def, 33554432))})
	}
	for k, v := range opt.Sysctls {
		s = append(s, sysctl{key: k, value: v})
	}
	return s
}

func sysctlsFor(n topology.Node, opt Options) []sysctl {
	if n.Role == topology.Switch {
		return switchSysctls(n.Name)
	}
	return hostSysctls(opt)
}

func boolStr(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

const allowedCC = "/proc/sys/net/ipv4/tcp_allowed_congestion_control"

// allowCC lets namespaces other than the root one make cc their default:
// the kernel refuses (EPERM) unless cc is in the root namespace's
// tcp_allowed_congestion_control. It adds cc to the list and returns a
// function that restores the list; the namespaces keep their default. A
// file lock serialises concurrent cclab processes doing the same.
func allowCC(cc string) (restore func(), err error) {
	if err := os.MkdirAll(runid.StateRoot, 0o755); err != nil {
		return nil, fmt.Errorf("allow cc: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(runid.StateRoot, ".allowed_cc.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("allow cc: %w", err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		lock.Close()
		return nil, fmt.Errorf("allow cc: lock: %w", err)
	}
	unlock := func() {
		unix.Flock(int(lock.Fd()), unix.LOCK_UN)
		lock.Close()
	}
	old, err := os.ReadFile(allowedCC)
	if err != nil {
		unlock()
		return nil, fmt.Errorf("allow cc: %w", err)
	}
	list := strings.TrimSpace(string(old))
	if hasWord(list, cc) {
		return unlock, nil
	}
	if err := os.WriteFile(allowedCC, []byte(list+" "+cc), 0); err != nil {
		unlock()
		return nil, fmt.Errorf("allow cc %s: %w", cc, err)
	}
	return func() {
		os.WriteFile(allowedCC, []byte(list), 0)
		unlock()
	}, nil
}
