// Package testtier sorts tests into the two tiers of the Makefile:
// `make check` runs with -short the tests that need neither root nor the
// kernel (law cores, parsers, analysis on fixtures, the page
// generators); `make test` runs every test, as root.
package testtier

import (
	"os"
	"testing"
)

// Kernel marks a test that needs root and the kernel: namespaces, BPF,
// /proc and /sys writes, /run/cclab. Under -short (make check) it is
// skipped; otherwise a test run by a user who is not root fails, saying
// so, instead of failing later on a permission (or passing by skipping).
func Kernel(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs root and the kernel: make test runs it, not make check (-short)")
	}
	if os.Geteuid() != 0 {
		t.Fatal("needs root and the kernel (namespaces, BPF, /run/cclab): run make test as root")
	}
}
