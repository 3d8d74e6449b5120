package vm

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// wantChecks are the steps every kernel's guest test must report, passed.
var wantChecks = []string{
	"load_cclab_int", "load_powertcp", "load_theta_powertcp", "load_hpcc", "load_swift", "load_dctcp",
	"param_tcp_powertcp_gamma_ppm", "param_tcp_theta_powertcp_base_rtt_ns", "param_tcp_hpcc_eta_ppm",
	"param_tcp_hpcc_vai_enable", "param_tcp_swift_sf_acks", "param_tcp_swift_beta_ppm",
	"topo_1switch", "topo_3switch",
	"flow_powertcp", "flow_hpcc", "flow_theta_small", "flow_theta_large", "flow_swift_low", "flow_swift_high",
	"flow_dctcp", "flow_theta_3sw",
	"hold_without_int_powertcp", "hold_without_int_hpcc", "int_seen_powertcp", "int_seen_hpcc",
	"window_follows_rtt_theta_powertcp", "window_follows_delay_swift", "window_follows_rtt_3switch",
	"ss_powertcp", "ss_hpcc", "ss_theta_large", "ss_swift_high",
	"rmmod_busy_powertcp", "rmmod_busy_hpcc", "rmmod_busy_theta_powertcp", "rmmod_busy_swift",
	"rmmod_idle_powertcp", "rmmod_idle_hpcc", "rmmod_idle_theta_powertcp", "rmmod_idle_swift",
	"no_leak_powertcp", "no_leak_hpcc", "no_leak_theta_powertcp", "no_leak_swift", "no_leak_theta_3sw",
	"rmmod_cclab_int", "dmesg_clean",
}

// wantINT are the checks with real INT (switch, host agent, cclab_int):
// required on 6.12; on 6.1 only when the guest did not report the INT
// switch unavailable (it attaches with TCX, Linux >= 6.6).
var wantINT = []string{
	"int_topo_1", "int_echoes_powertcp_1sw", "window_follows_int_powertcp_1sw",
	"int_echoes_hpcc_1sw", "window_follows_int_hpcc_1sw", "no_leak_int_1sw",
	"int_topo_3", "int_echoes_powertcp_3sw", "window_follows_int_powertcp_3sw",
	"int_echoes_hpcc_3sw", "window_follows_int_hpcc_3sw", "no_leak_int_3sw",
}

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
			want := wantChecks
			if why, unavailable := r.Note("int_unavailable"); unavailable && series != "6.12" {
				t.Logf("%s: INT not available in the guest: %s", series, why)
			} else {
				want = append(append([]string{}, wantChecks...), wantINT...)
			}
			if err := r.Err(want); err != nil {
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
