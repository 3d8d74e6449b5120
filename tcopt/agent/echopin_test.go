package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cilium/ebpf"

	"cclab/internal/runid"
)

// TestEchoPinLastUserUnpins: two runs' agents share the echo map pinned in
// one pin directory (standing in for the laws' /sys/fs/bpf/cclab-cc): the
// second reuses the first's map, closing the first keeps the pin for the
// second, and closing the last user unpins it and removes the directory.
func TestEchoPinLastUserUnpins(t *testing.T) {
	shared := runid.New().BPFDir()
	t.Cleanup(func() { os.RemoveAll(shared) })
	pin := filepath.Join(shared, EchoMapName)
	attachShared := func() *Agent {
		id := runid.New()
		a, err := Attach(context.Background(), id, Options{EchoPinDir: shared})
		if err != nil {
			t.Fatalf("Attach: %v", err)
		}
		t.Cleanup(func() { a.Close(); os.RemoveAll(id.BPFDir()) })
		return a
	}
	mapID := func(m *ebpf.Map) ebpf.MapID {
		info, err := m.Info()
		if err != nil {
			t.Fatal(err)
		}
		id, _ := info.ID()
		return id
	}

	first := attachShared()
	second := attachShared()
	if a, b := mapID(first.EchoMap()), mapID(second.EchoMap()); a != b {
		t.Fatalf("second agent's echo map %d, want the shared %d", b, a)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(pin); err != nil {
		t.Fatalf("closing one of two users removed the shared echo pin: %v", err)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{pin, shared} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("the last user's Close left %s", p)
		}
	}
}
