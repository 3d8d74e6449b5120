package topology

import (
	"path/filepath"
	"strings"
	"testing"
)

// Every shipped topology without propagation delay says purpose:
// plumbing and is labelled; those with delays (dumbbell among them, by
// the scaling rule) are not; a file cannot call a delayed topology
// plumbing, nor state another purpose.
func TestPlumbingTopologies(t *testing.T) {
	files, _ := filepath.Glob("../topologies/*.yaml")
	for _, f := range files {
		p, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		note, labelled := p.PlumbingNote()
		switch {
		case p.HasDelay() && labelled:
			t.Errorf("%s has delays but is labelled: %s", f, note)
		case !p.HasDelay() && p.Purpose != PurposePlumbing:
			t.Errorf("%s has no delay and does not say purpose: plumbing", f)
		case !p.HasDelay() && !strings.Contains(note, "no propagation delay (for plumbing tests, purpose: plumbing)") || !p.HasDelay() && !strings.Contains(note, "not results"):
			t.Errorf("%s: note %q", f, note)
		}
	}
	d, err := Load("../topologies/dumbbell.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, labelled := d.PlumbingNote(); labelled || !d.HasDelay() {
		t.Error("dumbbell has no delay: it should carry the scaling rule's")
	}
	for _, c := range []struct{ yml, want string }{
		{"name: x\npurpose: plumbing\nkind: line\nline: {switches: 1}\nlinks:\n  default: {rate: 100Mbit, buffer: 64KB, delay: 1ms}\n", "t.yaml:2:1: purpose plumbing is for a topology without propagation delay"},
		{"name: x\npurpose: results\nkind: line\nline: {switches: 1}\nlinks:\n  default: {rate: 100Mbit, buffer: 64KB}\n", "t.yaml:2:1: purpose \"results\": the only purpose a file states is \"plumbing\""},
	} {
		if _, err := Parse("t.yaml", []byte(c.yml)); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("error %v, want it to start %q", err, c.want)
		}
	}
	// Unmarked, a zero-delay file is labelled all the same.
	p, err := Parse("t.yaml", []byte("name: x\nkind: line\nline: {switches: 1}\nlinks:\n  default: {rate: 100Mbit, buffer: 64KB}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if note, ok := p.PlumbingNote(); !ok || !strings.Contains(note, "topology x has no propagation delay (for plumbing tests)") {
		t.Errorf("unmarked zero-delay plan: %q %v", note, ok)
	}
}
