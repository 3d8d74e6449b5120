package vm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// BuildModules builds kmod/ against k's headers in a private copy of the
// sources (so builds for different kernels never share objects) and returns
// the directory holding the .ko files. The compiler is Debian's gcc-12, the
// one both kernels were built with.
func BuildModules(ctx context.Context, repo, cache string, k Kernel) (string, error) {
	src := filepath.Join(cache, "build", k.Release, "src")
	if err := os.RemoveAll(src); err != nil {
		return "", fmt.Errorf("build modules for %s: %w", k.Release, err)
	}
	// kmod/ includes ../tcopt/*.h: copy both trees, keeping the layout.
	for _, dir := range []string{"kmod", "tcopt"} {
		if err := os.MkdirAll(filepath.Join(src, dir), 0o755); err != nil {
			return "", fmt.Errorf("build modules for %s: %w", k.Release, err)
		}
		cp := exec.CommandContext(ctx, "cp", "-a", filepath.Join(repo, dir)+"/.", filepath.Join(src, dir))
		if out, err := cp.CombinedOutput(); err != nil {
			return "", fmt.Errorf("copy %s for %s: %w\n%s", dir, k.Release, err, out)
		}
	}
	// The headers name Debian's compiler (gcc-12) themselves.
	mk := exec.CommandContext(ctx, "make", "-C", filepath.Join(src, "kmod"), "modules", "KDIR="+k.KDir)
	if out, err := mk.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build modules for %s: %w\n%s", k.Release, err, out)
	}
	return filepath.Join(src, "kmod"), nil
}
