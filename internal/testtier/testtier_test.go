package testtier

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestKernelProbe is the test TestKernelSkipsUnderShort runs in a
// process of its own.
func TestKernelProbe(t *testing.T) {
	if os.Getenv("TESTTIER_PROBE") != "1" {
		t.Skip("run by TestKernelSkipsUnderShort")
	}
	Kernel(t)
	t.Log("ran the kernel tier")
}

// Under -short a kernel-tier test is skipped; without it, it runs (as
// root) or fails naming root (as another user).
func TestKernelSkipsUnderShort(t *testing.T) {
	probe := func(short bool) string {
		args := []string{"-test.run", "^TestKernelProbe$", "-test.v"}
		if short {
			args = append(args, "-test.short")
		}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "TESTTIER_PROBE=1")
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	if out := probe(true); !strings.Contains(out, "--- SKIP: TestKernelProbe") || !strings.Contains(out, "make check") {
		t.Errorf("-short: not skipped:\n%s", out)
	}
	out := probe(false)
	want := "ran the kernel tier"
	if os.Geteuid() != 0 {
		want = "run make test as root"
	}
	if !strings.Contains(out, want) {
		t.Errorf("without -short: want %q in:\n%s", want, out)
	}
}
