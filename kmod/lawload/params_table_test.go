package lawload

import (
	"testing"

	"cclab/kmod/law"
)

// The eBPF build of every law has the parameters of the law table
// (kmod/law/law_table.h), no more and no fewer, with its defaults: the loader's
// names come from the object's BTF and its defaults from the object's
// own <law>_params_default(), so this fails when a build drifts from the
// table.
func TestParamsMatchLawTable(t *testing.T) {
	for _, l := range law.All() {
		ps, err := Resolve([]string{l.String()}, nil)
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		p, err := law.DefaultParams(l)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]uint64{}
		for _, q := range p.List() {
			want[q.Name] = q.Value
		}
		got := ps[0].Fields
		if len(got) != len(want) {
			t.Errorf("%s: eBPF build has %d parameters, the table %d (%s)", l, len(got), len(want), ps[0])
		}
		for _, f := range got {
			if v, ok := want[f.Name]; !ok || v != f.Value {
				t.Errorf("%s: eBPF %s=%d, table has it: %v, default %d", l, f.Name, f.Value, ok, v)
			}
		}
	}
}
