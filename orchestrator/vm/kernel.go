package vm

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// Series names the Debian kernels the VM test knows how to fetch.
var Series = []string{"6.1", "6.12"}

// Kernel is a Debian kernel unpacked under the cache.
type Kernel struct {
	Series  string // "6.1" or "6.12"
	Release string // uname -r, e.g. 6.1.0-50-amd64
	Vmlinuz string
	ModDir  string // lib/modules/<Release> of the image
	KDir    string // the headers tree to build modules against
}

// Root is the directory the image and headers packages were unpacked into.
func (k Kernel) Root() string {
	return filepath.Dir(filepath.Dir(filepath.Dir(k.ModDir)))
}

// FetchKernel resolves, downloads (once) and unpacks a Debian kernel series.
func FetchKernel(ctx context.Context, repo, cache, series string) (Kernel, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, filepath.Join(repo, "scripts/vm/fetch-kernel"), series, cache)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return Kernel{}, fmt.Errorf("fetch kernel %s: %w\n%s", series, err, errb.String())
	}
	k := Kernel{Series: series}
	vals := map[string]*string{"KREL": &k.Release, "VMLINUZ": &k.Vmlinuz, "MODDIR": &k.ModDir, "KDIR": &k.KDir}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), "=")
		if p, known := vals[key]; ok && known {
			*p = val
		}
	}
	for key, p := range vals {
		if *p == "" {
			return Kernel{}, fmt.Errorf("fetch kernel %s: no %s in its output:\n%s", series, key, out.String())
		}
	}
	return k, nil
}
