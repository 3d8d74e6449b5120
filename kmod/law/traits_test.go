package law

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// scripts/laws, the shell scripts' reading of the table, gives the laws
// and traits the table gives.
func TestScriptReadsTheTable(t *testing.T) {
	for _, tr := range append([]string{""}, Traits(-1).Names()...) {
		out, err := exec.Command("../../scripts/laws", tr).Output()
		if err != nil {
			t.Fatalf("scripts/laws %s: %v", tr, err)
		}
		var want []string
		for _, l := range All() {
			if tr == "" || slices.Contains(l.Traits().Names(), tr) {
				want = append(want, l.String())
			}
		}
		if got := strings.Fields(string(out)); !slices.Equal(got, want) {
			t.Errorf("scripts/laws %s: %v, want %v", tr, got, want)
		}
	}
	if err := exec.Command("../../scripts/laws", "fast").Run(); err == nil {
		t.Error("scripts/laws fast: accepted an unknown trait")
	}
}

// A law's module agrees with its traits: the ECN laws' modules ask for
// ECN (CCLAB_LAW_USES_ECN), the others do not.
func TestModulesFollowTraits(t *testing.T) {
	for _, l := range All() {
		src, err := os.ReadFile("../tcp_" + l.String() + ".c")
		if !l.HasModule() {
			if err == nil {
				t.Errorf("%s: kmod/tcp_%s.c exists without LAW_T_MODULE", l, l)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		if got := strings.Contains(string(src), "#define CCLAB_LAW_USES_ECN"); got != l.UsesECN() {
			t.Errorf("%s: module defines CCLAB_LAW_USES_ECN %v, table LAW_T_ECN %v", l, got, l.UsesECN())
		}
		if l.StateBytes() <= 0 {
			t.Errorf("%s: state of %d bytes", l, l.StateBytes())
		}
	}
	if !QCN.UsesQCN() || !QCN.UsesINT() || HPCC.UsesQCN() || !DCTCP.UsesECN() || DCTCP.HasModule() || !Swift.Traits().Has(TraitHops) {
		t.Errorf("traits: qcn %v, hpcc %v, dctcp %v, swift %v", QCN.Traits().Names(), HPCC.Traits().Names(), DCTCP.Traits().Names(), Swift.Traits().Names())
	}
}
