package lawload

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/cilium/ebpf"
)

// PathTable is the pinned map in which the laws that take their path's hop
// count (Swift, kmod/bpf/cc_law.h LAW_PATH_HOPS) look up a connection's
// (source, destination) at init. It exists while such a law is registered.
const PathTable = "cclab_path_hops"

// ErrNoPathTable: no registered law reads a path table.
var ErrNoPathTable = errors.New("no registered law takes its path's hop count")

// A PathHops is the switch count of the path from Src to Dst.
type PathHops struct {
	Src, Dst netip.Addr
	Switches uint32
}

// SetPathHops replaces the path table's contents with paths (the runner's
// topology: a table left from another topology would give its hop
// counts to this one's addresses). Laws read it when a connection starts.
func SetPathHops(opts Options, paths []PathHops) error {
	m, err := ebpf.LoadPinnedMap(filepath.Join(opts.pinDir(), PathTable), nil)
	if errors.Is(err, os.ErrNotExist) {
		return ErrNoPathTable
	}
	if err != nil {
		return fmt.Errorf("open path table: %w", err)
	}
	defer m.Close()
	var k [8]byte
	var keys [][8]byte
	it := m.Iterate()
	var v uint32
	for it.Next(&k, &v) {
		keys = append(keys, k)
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("read path table: %w", err)
	}
	for _, k := range keys {
		if err := m.Delete(k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return fmt.Errorf("clear path table: %w", err)
		}
	}
	for _, p := range paths {
		if !p.Src.Is4() || !p.Dst.Is4() {
			return fmt.Errorf("path %v -> %v: IPv4 only", p.Src, p.Dst)
		}
		s, d := p.Src.As4(), p.Dst.As4()
		// struct cclab_path_key: saddr, daddr as the socket holds them
		// (network order), so the bytes in address order.
		key := [8]byte{s[0], s[1], s[2], s[3], d[0], d[1], d[2], d[3]}
		if err := m.Put(key, p.Switches); err != nil {
			return fmt.Errorf("path %v -> %v: %w", p.Src, p.Dst, err)
		}
	}
	return nil
}
