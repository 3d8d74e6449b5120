package lawload

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	kbpf "cclab/kmod/bpf"
)

// pinOldEcho pins, in dir, a map named as the echo map but laid out as
// this build's is not (socket storage needs the value's BTF, so a hash of
// the old value size stands for another build's layout), and returns it
// open.
func pinOldEcho(t *testing.T, dir string) *ebpf.Map {
	t.Helper()
	m, err := ebpf.NewMap(&ebpf.MapSpec{Name: "cclab_int_echo", Type: ebpf.Hash,
		KeySize: 4, ValueSize: 288, MaxEntries: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := m.Pin(filepath.Join(dir, "cclab_int_echo")); err != nil {
		t.Fatal(err)
	}
	return m
}

// An echo map pin of another cclab build that nothing uses any more is
// replaced when a law loads; a compatible shared pin that nothing uses
// (the trace map, which a reader may hold open) is kept as it is.
func TestLoadReplacesAnOrphanedOldMap(t *testing.T) {
	opts := testOpts(t)
	old := pinOldEcho(t, opts.PinDir)
	oldInfo, _ := old.Info()
	oldID, _ := oldInfo.ID()
	spec, err := kbpf.Spec("hpcc")
	if err != nil {
		t.Fatal(err)
	}
	ts := spec.Maps["cclab_cc_trace"].Copy()
	ts.Pinning = ebpf.PinNone
	trace, err := ebpf.NewMap(ts)
	if err != nil {
		t.Fatal(err)
	}
	defer trace.Close()
	if err := trace.Pin(filepath.Join(opts.PinDir, "cclab_cc_trace")); err != nil {
		t.Fatal(err)
	}
	trInfo, _ := trace.Info()
	traceID, _ := trInfo.ID()
	old.Close() // the pin alone holds it: orphaned

	opts.Names = map[string]string{"hpcc": shortName("hpcc")}
	if _, err := Load(context.Background(), []string{"hpcc"}, nil, opts); err != nil {
		t.Fatalf("load over an orphaned old echo map: %v", err)
	}
	echo, err := ebpf.LoadPinnedMap(filepath.Join(opts.PinDir, "cclab_int_echo"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	if err := spec.Maps["cclab_int_echo"].Compatible(echo); err != nil {
		t.Errorf("the echo pin is still the old layout: %v", err)
	}
	if info, _ := echo.Info(); info != nil {
		if id, _ := info.ID(); id == oldID {
			t.Errorf("the old echo map (id %d) is still pinned", id)
		}
	}
	tr, err := ebpf.LoadPinnedMap(filepath.Join(opts.PinDir, "cclab_cc_trace"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if info, _ := tr.Info(); info != nil {
		if id, _ := info.ID(); id != traceID {
			t.Errorf("the compatible trace map was replaced (id %d, was %d)", id, traceID)
		}
	}
}

// An old echo map that a program which is no law still uses (an INT agent
// of a run of that build) stays, and the load says why it fails.
func TestLoadKeepsAnOldMapInUse(t *testing.T) {
	opts := testOpts(t)
	old := pinOldEcho(t, opts.PinDir)
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Type: ebpf.SocketFilter, License: "GPL",
		Instructions: asm.Instructions{
			asm.LoadMapPtr(asm.R1, old.FD()),
			asm.Mov.Imm(asm.R0, 0),
			asm.Return(),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	old.Close()

	opts.Names = map[string]string{"hpcc": shortName("hpcc")}
	_, err = Load(context.Background(), []string{"hpcc"}, nil, opts)
	if err == nil || !strings.Contains(err.Error(), "another cclab build") {
		t.Fatalf("load over an old echo map in use: %v, want the other build named", err)
	}
	if _, serr := os.Stat(filepath.Join(opts.PinDir, "cclab_int_echo")); serr != nil {
		t.Errorf("the old map in use lost its pin: %v", serr)
	}
}
