package rcuexpedite

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"cclab/internal/runid"
)

// testKnob is a knob in a file of the test's own, with its own state root:
// other tests running at the same time hold the real one.
func testKnob(t *testing.T) Knob {
	t.Helper()
	dir := t.TempDir()
	k := Knob{Path: filepath.Join(dir, "knob"), StateRoot: filepath.Join(dir, "state")}
	if err := os.WriteFile(k.Path, []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return k
}

func value(t *testing.T, k Knob) string {
	t.Helper()
	b, err := os.ReadFile(k.Path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// Two runs hold the knob, one of them twice; it stays 1 until the last
// hold lets go, then it is back to its saved value with nothing left but
// the lock file.
func TestHoldersAreCounted(t *testing.T) {
	k := testKnob(t)
	a, b := runid.New(), runid.New()
	ha, err := k.Hold(a)
	if err != nil {
		t.Fatal(err)
	}
	if v := value(t, k); v != "1" {
		t.Fatalf("held: knob %s", v)
	}
	again, err := k.Hold(a) // holds nest
	if err != nil {
		t.Fatal(err)
	}
	hb, err := k.Hold(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []*Hold{ha, again} {
		if err := h.Release(); err != nil {
			t.Fatal(err)
		}
		if v := value(t, k); v != "1" {
			t.Fatalf("holders left: knob %s", v)
		}
	}
	if err := hb.Release(); err != nil {
		t.Fatal(err)
	}
	if v := value(t, k); v != "0" {
		t.Fatalf("released: knob %s", v)
	}
	left, _ := filepath.Glob(filepath.Join(k.holders(), "*"))
	if _, err := os.Stat(k.original()); !os.IsNotExist(err) || len(left) > 0 {
		t.Errorf("left behind: saved value %v, markers %v", err, left)
	}
}

// A holder killed with SIGKILL never releases; Settle sees its marker
// unlocked and restores the knob, and not while the holder lives.
func TestKilledHolderSettles(t *testing.T) {
	if os.Getenv("RCUEXPEDITE_CHILD") != "" {
		return
	}
	k := testKnob(t)
	cmd := exec.Command(os.Args[0], "-test.run", "TestChildHolds$", "-test.timeout", "60s")
	cmd.Env = append(os.Environ(), "RCUEXPEDITE_CHILD=1", "RCUEXPEDITE_KNOB="+k.Path, "RCUEXPEDITE_ROOT="+k.StateRoot)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "held") {
		t.Fatalf("child: %q %v", line, err)
	}
	if v, err := k.Settle(); err != nil || v != "" {
		t.Fatalf("settle while the holder lives: restored %q, %v", v, err)
	}
	if v := value(t, k); v != "1" {
		t.Fatalf("settled while the holder lives: knob %s", v)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if v, err := k.Settle(); err != nil || v != "0" {
		t.Fatalf("settle: restored %q, %v", v, err)
	}
	if v := value(t, k); v != "0" {
		t.Fatalf("after kill -9 and Settle: knob %s", v)
	}
}

// TestChildHolds is the holder TestKilledHolderSettles kills.
func TestChildHolds(t *testing.T) {
	if os.Getenv("RCUEXPEDITE_CHILD") == "" {
		t.Skip("run by TestKilledHolderSettles")
	}
	k := Knob{Path: os.Getenv("RCUEXPEDITE_KNOB"), StateRoot: os.Getenv("RCUEXPEDITE_ROOT")}
	if _, err := k.Hold(runid.New()); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("held\n")
	select {}
}

// A knob that cannot be written: Hold fails, changes nothing and leaves
// no saved value behind that would make later Settles fail.
func TestHoldFailsCleanly(t *testing.T) {
	k := Knob{Path: "/proc/version", StateRoot: t.TempDir()} // readable, never writable
	if _, err := k.Hold(runid.New()); err == nil {
		t.Fatal("held a knob that cannot be written")
	}
	if _, err := os.Stat(k.original()); !os.IsNotExist(err) {
		t.Errorf("saved value left behind: %v", err)
	}
	if v, err := k.Settle(); err != nil || v != "" {
		t.Errorf("settle after a failed hold: %q, %v", v, err)
	}
}

// A saved value the knob never had (a crash mid-write before writes were
// atomic, a hand edit) is dropped, not written to the knob.
func TestSettleDropsCorruptSavedValue(t *testing.T) {
	k := testKnob(t)
	if err := os.WriteFile(k.Path, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(k.StateRoot, 0o755)
	if err := os.WriteFile(k.original(), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if v, err := k.Settle(); err != nil || v != "" {
		t.Fatalf("settle: %q, %v", v, err)
	}
	if _, err := os.Stat(k.original()); !os.IsNotExist(err) || value(t, k) != "1" {
		t.Errorf("saved value %v, knob %s", err, value(t, k))
	}
}

// The kernel's own knob: while held, synchronize_rcu is expedited.
func TestSystemKnob(t *testing.T) {
	if _, err := os.Stat(System.Path); err != nil {
		t.Skipf("no %s: %v", System.Path, err)
	}
	id := runid.New()
	h, err := System.Hold(id)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(System.Path)
	if err != nil || strings.TrimSpace(string(b)) != "1" {
		t.Errorf("held: %s %v", b, err)
	}
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
}
