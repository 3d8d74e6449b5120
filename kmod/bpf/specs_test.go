package bpf

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/cilium/ebpf"

	"cclab/kmod/law"
)

// Every law of the table has an eBPF build, and every build is a law of
// the table under the same name.
func TestEveryLawHasABuild(t *testing.T) {
	for _, name := range law.Laws() {
		spec, err := Spec(name)
		if err != nil {
			t.Errorf("law %s (law_table.h): %v", name, err)
			continue
		}
		if m, ok := spec.Maps["cclab_ops"]; !ok || m.Type != ebpf.StructOpsMap {
			t.Errorf("law %s: object has no struct_ops map cclab_ops", name)
		}
	}
	objs, err := fs.Glob(objects, "*_bpfel.o")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		name := strings.TrimSuffix(o, "_bpfel.o")
		if _, err := law.ParseLaw(name); err != nil {
			t.Errorf("eBPF object %s: %v", o, err)
		}
	}
	if len(objs) != len(Laws()) || len(Laws()) != len(law.Laws()) {
		t.Errorf("%d objects, %d laws with a build, %d laws in the table", len(objs), len(Laws()), len(law.Laws()))
	}
}
