package bpf

import (
	"testing"

	"cclab/kmod/law"
)

// Every law of the table has an eBPF build, and every build is a law of
// the table under the same name.
func TestEveryLawHasABuild(t *testing.T) {
	for _, name := range law.Laws() {
		if _, ok := loaders[name]; !ok {
			t.Errorf("law %s (law_table.h) has no eBPF object", name)
		}
	}
	for name := range loaders {
		if _, err := law.ParseLaw(name); err != nil {
			t.Errorf("eBPF object %s: %v", name, err)
		}
		if _, ok := objects[name]; !ok {
			t.Errorf("eBPF object %s has no build identity (objects)", name)
		}
	}
}
