package vm

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestKernelModulesInVM boots each Debian kernel under qemu with the
// modules built against its headers and requires every guest check to pass.
// It skips only when qemu is not installed. The first run on a machine
// downloads the kernels (cached afterwards, see DefaultCache).
func TestKernelModulesInVM(t *testing.T) {
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("qemu-system-x86_64 is not installed (scripts/bootstrap installs it)")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, series := range Series {
		t.Run(series, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			start := time.Now()
			r, err := Run(ctx, Config{Repo: repo, Series: series, Progress: testWriter{t}})
			if err != nil {
				if r != nil {
					t.Logf("guest console:\n%s", r.Console)
				}
				t.Fatal(err)
			}
			if why, unavailable := r.Note("int_unavailable"); unavailable {
				t.Logf("%s: the guest reported INT unavailable (a failure): %s", series, why)
			}
			if err := r.Err(Required(r)); err != nil {
				t.Logf("guest console:\n%s", r.Console)
				t.Fatal(err)
			}
			t.Logf("%s (%s, %s): %d checks passed, boot %.1fs, total %.1fs",
				series, r.Kernel, r.Accel, len(r.Checks), r.Seconds, time.Since(start).Seconds())
			for _, m := range r.Metrics {
				t.Logf("  %s = %g %s", m.Name, m.Value, m.Unit)
			}
		})
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p[:len(p)-min(1, len(p))]))
	return len(p), nil
}

func TestMain(m *testing.M) {
	os.Exit(m.Run())
}
