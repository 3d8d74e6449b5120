package lawload

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cilium/ebpf"

	kbpf "cclab/kmod/bpf"
)

// List returns the laws cclab registered in the pin directory, with the
// parameters in force read back from their objects. The runner writes
// them into run.json.
func List(opts Options) ([]Registration, error) {
	pinDir := opts.pinDir()
	ents, err := os.ReadDir(pinDir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", pinDir, err)
	}
	var regs []Registration
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		law, name, _ := strings.Cut(e.Name(), "@")
		if name == "" {
			name = law
		}
		if !slices.Contains(kbpf.Laws(), law) {
			continue // not ours
		}
		dir := filepath.Join(pinDir, e.Name())
		if _, err := os.Stat(filepath.Join(dir, "link")); err != nil {
			continue // half-removed
		}
		r := Registration{Law: law, Name: name, Pin: dir, Build: readBuild(dir)}
		ps, err := readParams(law, dir)
		switch {
		case err == nil:
			r.Params = ps
		case r.Stale():
			// Another build may lay its parameters out otherwise (one
			// added since): listed without them, stale, so that Load and
			// Reconcile register this build's in its place.
			r.Params = Params{Law: law}
		default:
			return nil, err
		}
		regs = append(regs, r)
	}
	return regs, nil
}

// InForce returns the registered laws' parameters by congestion-control
// name, for run.json's "cc".
func InForce() (map[string]Params, error) {
	regs, err := List(Options{})
	if err != nil {
		return nil, err
	}
	m := make(map[string]Params, len(regs))
	for _, r := range regs {
		m[r.Name] = r.Params
	}
	return m, nil
}

// readParams decodes the parameters from a registration's pinned .rodata.
func readParams(law, dir string) (Params, error) {
	spec, err := kbpf.Spec(law)
	if err != nil {
		return Params{}, err
	}
	ps, v, err := layout(law, spec)
	if err != nil {
		return Params{}, err
	}
	m, err := ebpf.LoadPinnedMap(filepath.Join(dir, "rodata"), &ebpf.LoadPinOptions{ReadOnly: true})
	if err != nil {
		return Params{}, fmt.Errorf("open %s parameters: %w", law, err)
	}
	defer m.Close()
	val := make([]byte, m.ValueSize())
	if err := m.Lookup(uint32(0), &val); err != nil {
		return Params{}, fmt.Errorf("read %s parameters: %w", law, err)
	}
	off := int(v.Offset)
	if off+len(v.Value) > len(val) {
		return Params{}, fmt.Errorf("%s parameters: pinned object does not match this build", law)
	}
	if err := ps.decode(val[off:]); err != nil {
		return Params{}, err
	}
	return ps, nil
}
