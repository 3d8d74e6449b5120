package vm

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"
)

// Config is one VM test of one kernel series.
type Config struct {
	Repo     string        // the cclab source tree (scripts/vm, kmod, tcopt)
	Cache    string        // downloads and builds; DefaultCache() if empty
	Series   string        // "6.1" or "6.12"
	Timeout  time.Duration // for the boot; 240 s if zero
	Extra    []string      // more files for the guest's /cclab/
	Progress io.Writer     // progress lines; nil for none
}

// DefaultCache is $CCLAB_VM_CACHE, else $XDG_CACHE_HOME/cclab/vm, else
// ~/.cache/cclab/vm: it survives between runs so downloads happen once.
func DefaultCache() string {
	if d := os.Getenv("CCLAB_VM_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "cclab", "vm")
	}
	return filepath.Join(os.TempDir(), "cclab-vm")
}

// Run fetches the kernel, builds the modules and the initramfs, boots the
// guest and returns its report. It holds a lock on the cache meanwhile, so
// concurrent runs take turns instead of corrupting each other's builds.
func Run(ctx context.Context, c Config) (*Result, error) {
	if c.Cache == "" {
		c.Cache = DefaultCache()
	}
	if c.Timeout == 0 {
		// The guest's checks take about 150 s under TCG on a 2-core
		// host (2026-11-26, 6.1: 149.4 s before the QCN laws' flows,
		// 150.8 s with them), which the former 150 s left no room for.
		c.Timeout = 240 * time.Second
	}
	progress := c.Progress
	if progress == nil {
		progress = io.Discard
	}
	if err := os.MkdirAll(c.Cache, 0o755); err != nil {
		return nil, fmt.Errorf("vm cache %s: %w", c.Cache, err)
	}
	unlock, err := lockDir(c.Cache)
	if err != nil {
		return nil, err
	}
	defer unlock()

	t0 := time.Now()
	fmt.Fprintf(progress, "vm %s: resolving and fetching the kernel (cache %s)\n", c.Series, c.Cache)
	k, err := FetchKernel(ctx, c.Repo, c.Cache, c.Series)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "vm %s: building modules for %s\n", c.Series, k.Release)
	koDir, err := BuildModules(ctx, c.Repo, c.Cache, k)
	if err != nil {
		return nil, err
	}
	guest, err := buildGuestInt(ctx, c.Repo, c.Cache)
	if err != nil {
		return nil, err
	}
	extra := append([]string{guest,
		filepath.Join(c.Repo, "orchestrator/vm/testdata/vm-line-1.yaml"),
		filepath.Join(c.Repo, "orchestrator/vm/testdata/vm-line-3.yaml"),
	}, c.Extra...)
	initrd, err := BuildInitramfs(ctx, c.Repo, c.Cache, k, koDir, extra...)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(progress, "vm %s: prepared in %.1fs, booting\n", c.Series, time.Since(t0).Seconds())

	opts := BootOptions{Timeout: c.Timeout, Accel: "tcg", Progress: c.Progress}
	if kvmUsable(c.Cache) {
		opts.Accel = "kvm"
		opts.BootWithin = 30 * time.Second
		r, err := Boot(ctx, k, initrd, opts)
		// A /dev/kvm that opens but cannot run the guest (nested
		// virtualisation without VMX, MSR errors) fails before BOOT.
		if err == nil || (r != nil && r.Booted) || ctx.Err() != nil {
			return r, err
		}
		fmt.Fprintf(progress, "vm %s: no boot under KVM (%v); using TCG from now on\n", c.Series, err)
		if err := recordKVMBroken(c.Cache); err != nil {
			return nil, fmt.Errorf("record kvm state: %w", err)
		}
		opts.Accel, opts.BootWithin = "tcg", 0
	}
	return Boot(ctx, k, initrd, opts)
}

// buildGuestInt builds orchestrator/vm/guestint, static, for the guest.
// It uses the committed BPF objects and bindings (docs/architecture.md,
// "Generated files").
func buildGuestInt(ctx context.Context, repo, cache string) (string, error) {
	out := filepath.Join(cache, "build", "guestint")
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	cmd := exec.CommandContext(ctx, gobin, "build", "-o", out, "./orchestrator/vm/guestint")
	cmd.Dir = repo
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build guestint (run make build first for the BPF bindings): %w\n%s", err, b)
	}
	return out, nil
}

// lockDir takes an exclusive flock on dir/lock.
func lockDir(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("vm cache lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("vm cache lock: %w", err)
	}
	return func() { f.Close() }, nil
}
