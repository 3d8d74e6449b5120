package vm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
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
	sum, err := sourceSum(repo)
	if err != nil {
		return "", err
	}
	// Unchanged sources: the modules built last time are still right.
	stamp := filepath.Join(cache, "build", k.Release, "modules.sum")
	if b, err := os.ReadFile(stamp); err == nil && string(b) == sum {
		return filepath.Join(src, "kmod"), nil
	}
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
	if err := os.WriteFile(stamp, []byte(sum), 0o644); err != nil {
		return "", fmt.Errorf("build modules for %s: %w", k.Release, err)
	}
	return filepath.Join(src, "kmod"), nil
}

// sourceSum hashes the module sources: kmod/ and tcopt/ C files and Kbuild files.
func sourceSum(repo string) (string, error) {
	h := sha256.New()
	for _, dir := range []string{"kmod", "tcopt"} {
		err := filepath.WalkDir(filepath.Join(repo, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			switch filepath.Ext(p) {
			case ".c", ".h":
			default:
				if b := filepath.Base(p); b != "Kbuild" && b != "Makefile" {
					return nil
				}
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s %d\n", p, len(b))
			h.Write(b)
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("hash module sources: %w", err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
