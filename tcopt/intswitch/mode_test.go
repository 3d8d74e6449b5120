package intswitch

import (
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
)

// TestTCXProbe: the probe finds tcx exactly on kernels from 6.6 on, and
// AttachAuto resolves to what it found.
func TestTCXProbe(t *testing.T) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	var major, minor int
	if _, err := fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &major, &minor); err != nil {
		t.Fatalf("kernel release %q: %v", u.Release[:], err)
	}
	want := major > 6 || major == 6 && minor >= 6
	got, err := haveTCX()
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("tcx probe on %d.%d: %v, want %v", major, minor, got, want)
	}
	mode, err := resolveMode(AttachAuto)
	if err != nil {
		t.Fatal(err)
	}
	if (mode == AttachTCX) != want {
		t.Fatalf("AttachAuto on %d.%d resolves to %s", major, minor, mode)
	}
	t.Logf("kernel %d.%d: AttachAuto is %s", major, minor, mode)
}
