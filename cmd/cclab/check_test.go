package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// nobody is the unprivileged user `cclab check` runs as in the test.
const nobody = 65534

// asNonRoot runs the cclab binary bin with args as a user who is not root
// (nobody when the test runs as root: it may not load BPF, build
// namespaces or write /proc), returning its output and exit status.
func asNonRoot(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}}}
	}
	cmd.Env = append(os.Environ(), "HOME=/nonexistent")
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// `cclab check` needs neither root nor the kernel: as nobody it passes the
// default experiment, and reports every error of a bad one at file:line.
func TestCheckAsNonRoot(t *testing.T) {
	bin := madeCclab(t)
	// The binary's and the bad file's directories are the test's own (0700).
	tmp := t.TempDir()
	for _, dir := range []string{filepath.Dir(bin), filepath.Dir(tmp), tmp} {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	def, err := filepath.Abs("../../experiments/default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if out, code := asNonRoot(t, bin, "check", def); code != 0 || !strings.Contains(out, "default.yaml: ok") {
		t.Fatalf("check default.yaml as non-root: exit %d\n%s", code, out)
	}
	topo, err := filepath.Abs("../../topologies/dumbbell.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(tmp, "bad.yaml")
	body := "name: bad\ntopology: " + topo + "\ncompare: [powertcp, hv]\nlaws:\n  powertcp.gamma_ppm: 2000000\n" +
		"variants:\n  hv: {law: hpcc, set: {max_stage: 101}}\nworkload:\n  - name: a\n    long: {src: h1, dst: h2, stop: 1s}\n"
	if err := os.WriteFile(bad, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := asNonRoot(t, bin, "check", bad)
	if code == 0 {
		t.Fatalf("bad experiment passed:\n%s", out)
	}
	for _, want := range []string{
		bad + ":5:3: laws: powertcp gamma_ppm=2000000 ppm: outside its range 1..1000000",
		bad + ":7:3: variant hv: hpcc max_stage=101 stages: outside its range 0..100",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}

// cc load types and checks its name=value settings against the law table
// before it loads anything: a bad one is refused and the pin directory
// stays empty.
func TestCCLoadChecksSettingsFirst(t *testing.T) {
	pins := filepath.Join(t.TempDir(), "pins")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"hpcc", "eta_ppm=5"}, "hpcc eta_ppm=5 ppm: outside its range 100000..1000000"},
		{[]string{"hpcc", "swift.hops=2"}, "law swift is not among hpcc"},
		{[]string{"timely", "t_low_ns=600000"}, "t_low_ns must be below t_high_ns"},
		{[]string{"hpcc", "eta_ppm=0x10"}, "not a non-negative integer"},
	} {
		args := append([]string{"cc", "load", "--pin-dir", pins}, c.args...)
		if _, err := runCclab(t, args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("cclab %s: %v, want an error saying %q", strings.Join(args, " "), err, c.want)
		}
		if _, err := os.Stat(pins); !os.IsNotExist(err) {
			t.Fatalf("cclab %s touched the pin directory: %v", strings.Join(args, " "), err)
		}
	}
}
