package vm

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
)

// BuildInitramfs packs the guest root for k: busybox, ip/tc/ss/iperf3, the
// distribution modules the test loads, the .ko files in koDir and extra
// files (copied to /cclab/ in the guest).
func BuildInitramfs(ctx context.Context, repo, cache string, k Kernel, koDir string, extra ...string) (string, error) {
	out := filepath.Join(cache, "build", k.Release, "initramfs.cpio.gz")
	args := append([]string{k.Release, k.Root(), koDir, out}, extra...)
	cmd := exec.CommandContext(ctx, filepath.Join(repo, "scripts/vm/make-initramfs"), args...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("initramfs for %s: %w\n%s", k.Release, err, b)
	}
	return out, nil
}
