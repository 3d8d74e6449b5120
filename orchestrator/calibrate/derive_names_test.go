package calibrate

import (
	"testing"

	"cclab/kmod/law"
)

// The laws and parameters the rule derives are the law table's
// (kmod/law/law_table.h), spelled as it spells them.
func TestDerivedNamesInLawTable(t *testing.T) {
	for name, params := range lawParams {
		l, err := law.ParseLaw(name)
		if err != nil {
			t.Errorf("derived law: %v", err)
			continue
		}
		p, err := law.DefaultParams(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range params {
			if _, ok := p.Get(q); !ok {
				t.Errorf("%s: derived parameter %s is not in the law table", name, q)
			}
		}
	}
}
