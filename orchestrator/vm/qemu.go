package vm

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// BootOptions configure one guest boot.
type BootOptions struct {
	Timeout time.Duration // whole boot, test and power-off
	Accel   string        // "kvm" or "tcg"
	CPUs    int
	MemMB   int
	// Progress, if set, receives the guest's report lines as they come.
	Progress io.Writer
	// BootWithin, if set, kills the guest when no BOOT line came within it
	// (used to detect a /dev/kvm that opens but does not run guests).
	BootWithin time.Duration
}

// Boot runs the kernel with the initramfs under qemu and collects the
// guest's report. The error is about qemu itself (missing, timed out);
// whether the guest's checks passed is in the Result.
func Boot(ctx context.Context, k Kernel, initrd string, o BootOptions) (*Result, error) {
	if o.CPUs == 0 {
		o.CPUs = 2
	}
	if o.MemMB == 0 {
		o.MemMB = 2048
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	accel := o.Accel
	if accel == "tcg" {
		// One host thread for all vCPUs: multi-threaded TCG showed spurious
		// int3 oopses at patched kernel text and RCU stalls in the guest.
		accel = "tcg,thread=single"
	}
	args := []string{
		"-accel", accel, "-nographic", "-no-reboot", "-nic", "none",
		"-smp", fmt.Sprint(o.CPUs), "-m", fmt.Sprint(o.MemMB),
		"-kernel", k.Vmlinuz, "-initrd", initrd,
		// panic=-1: an oops ends the boot at once instead of hanging to the timeout.
		"-append", "console=ttyS0 quiet panic=-1 oops=panic",
	}
	if o.Accel == "kvm" {
		args = append(args, "-cpu", "host")
	}
	cmd := exec.CommandContext(ctx, "qemu-system-x86_64", args...)
	cmd.WaitDelay = 5 * time.Second
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	r := &Result{Series: k.Series, Accel: o.Accel}
	var console strings.Builder
	var wg sync.WaitGroup
	booted := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			line := sc.Text()
			console.WriteString(line + "\n")
			wasBooted := r.Booted
			r.parseLine(line)
			if r.Booted && !wasBooted {
				close(booted)
			}
			if o.Progress != nil && strings.Contains(line, Tag+" ") {
				fmt.Fprintf(o.Progress, "  [%s] %s\n", k.Series, strings.TrimSpace(line[strings.Index(line, Tag+" ")+len(Tag)+1:]))
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		pw.Close()
		wg.Wait()
		return nil, fmt.Errorf("start qemu: %w", err)
	}
	noBoot := false
	if o.BootWithin > 0 {
		go func() {
			select {
			case <-booted:
			case <-ctx.Done():
			case <-time.After(o.BootWithin):
				noBoot = true
				cancel()
			}
		}()
	}
	werr := cmd.Wait()
	pw.Close()
	wg.Wait()
	r.Seconds = time.Since(start).Seconds()
	r.Console = console.String()
	switch {
	case noBoot:
		return r, fmt.Errorf("%s: no BOOT line within %s", k.Series, o.BootWithin)
	case ctx.Err() != nil:
		return r, fmt.Errorf("%s: guest timed out after %s", k.Series, o.Timeout)
	case werr != nil:
		return r, fmt.Errorf("%s: qemu: %w", k.Series, werr)
	}
	return r, nil
}

// kvmUsable says whether to try KVM: CCLAB_VM_ACCEL forces kvm or tcg;
// otherwise /dev/kvm must open read-write and not be recorded as broken in
// the cache (see recordKVMBroken).
func kvmUsable(cache string) bool {
	switch os.Getenv("CCLAB_VM_ACCEL") {
	case "kvm":
		return true
	case "tcg":
		return false
	}
	if _, err := os.Stat(kvmBrokenFile(cache)); err == nil {
		return false
	}
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// kvmBrokenFile marks, per host kernel, that /dev/kvm opened but a guest
// never booted on it (as in nested setups without VMX passthrough).
func kvmBrokenFile(cache string) string {
	rel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	return filepath.Join(cache, "kvm-broken-"+strings.TrimSpace(string(rel)))
}

func recordKVMBroken(cache string) error {
	return os.WriteFile(kvmBrokenFile(cache), []byte("a guest did not boot under KVM; using TCG\n"), 0o644)
}
