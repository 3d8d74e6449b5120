package bpfcheck

import (
	"sort"
	"testing"

	"github.com/cilium/ebpf"
)

// verifierBudget is the most instructions the verifier may walk for one
// law's step, a fifth of its 1M limit: the struct_ops glue around a law
// needs headroom.
const verifierBudget = 200000

// TestVerifierCost loads each law's program alone and reports how much
// work the verifier does for it (docs/performance.md).
func TestVerifierCost(t *testing.T) {
	spec, err := loadLawCheck()
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(spec.Programs))
	for name := range spec.Programs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := spec.Copy()
		for other := range s.Programs {
			if other != name {
				delete(s.Programs, other)
			}
		}
		coll, err := ebpf.NewCollectionWithOptions(s, ebpf.CollectionOptions{
			Programs: ebpf.ProgramOptions{LogLevel: ebpf.LogLevelStats}})
		if err != nil {
			t.Errorf("%s: %+v", name, err)
			continue
		}
		info, err := coll.Programs[name].Info()
		if err != nil {
			coll.Close()
			t.Fatal(err)
		}
		n, ok := info.VerifiedInstructions()
		coll.Close()
		if !ok {
			t.Fatalf("%s: kernel does not report verified instructions", name)
		}
		t.Logf("%-20s %4d instructions, verifier walked %6d", name, len(spec.Programs[name].Instructions), n)
		if n > verifierBudget {
			t.Errorf("%s: verifier walked %d instructions, budget %d", name, n, verifierBudget)
		}
	}
}
