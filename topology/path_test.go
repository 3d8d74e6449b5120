package topology

import (
	"net/netip"
	"testing"
)

// line builds h0 - s0 - s1 - ... - h1 by hand (the planner has its own tests).
func line(switches int) *Plan {
	p := &Plan{Name: "line"}
	p.Nodes = append(p.Nodes, Node{Name: "h0", Role: Host, Addr: netip.MustParseAddr("198.18.0.1")})
	p.Nodes = append(p.Nodes, Node{Name: "h1", Role: Host, Addr: netip.MustParseAddr("198.18.0.2")})
	prev := "h0"
	for i := 0; i < switches; i++ {
		name := string(rune('a' + i))
		p.Nodes = append(p.Nodes, Node{Name: name, Role: Switch})
		p.Links = append(p.Links, Link{A: Port{Node: prev}, B: Port{Node: name}, Rate: 1e9})
		prev = name
	}
	p.Links = append(p.Links, Link{A: Port{Node: prev}, B: Port{Node: "h1"}, Rate: 1e9})
	return p
}

func TestPathLine(t *testing.T) {
	p := line(3)
	path, err := p.Path("h0", "h1")
	if err != nil {
		t.Fatal(err)
	}
	if len(path) != 4 {
		t.Fatalf("path has %d links, want 4", len(path))
	}
	if path[0].A.Node != "h0" || path[3].B.Node != "h1" {
		t.Fatalf("path out of order: %+v", path)
	}
	if _, err := p.Path("h0", "nope"); err == nil {
		t.Fatal("path to a missing node accepted")
	}
}
