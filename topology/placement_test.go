package topology

import (
	"strings"
	"testing"
	"time"
)

// leafSpineDelayed is a leaf-spine of 2 leaves, 2 spines and 4 hosts with
// 500 us on every link; a test appends its delay section.
const leafSpineDelayed = "name: ls\nkind: leafspine\nleafspine: {leaves: 2, spines: 2, hosts_per_leaf: 2}\n" +
	"links:\n  default: {rate: 100Mbit, buffer: 64KB, delay: 500us}\n"

// The delay key picks the placement; a value it does not know is an
// error at the key.
func TestDelayPlacementKey(t *testing.T) {
	for _, c := range []struct{ key, want string }{{"", ""}, {"delay: {placement: path}\n", ""}, {"delay: {placement: link}\n", PlaceLink}} {
		p, err := Parse("ls.yaml", []byte(leafSpineDelayed+c.key))
		if err != nil {
			t.Fatalf("%q: %v", c.key, err)
		}
		if p.DelayPlacement != c.want {
			t.Errorf("%q: placement %q, want %q", c.key, p.DelayPlacement, c.want)
		}
	}
	_, err := Parse("ls.yaml", []byte(leafSpineDelayed+"delay: {placement: wire}\n"))
	if err == nil || !strings.Contains(err.Error(), `delay placement "wire": want path or link`) || !strings.Contains(err.Error(), "ls.yaml:6") {
		t.Errorf("placement wire: %v", err)
	}
}

// Under link placement every delayed link has two delay ports, its
// receiving interfaces, each with the link's delay as its one class, every
// host as a source and twice the link's bytes in flight + 1 MiB as its
// buffer.
func TestLinkDelayPorts(t *testing.T) {
	p, err := Parse("ls.yaml", []byte(leafSpineDelayed+"delay: {placement: link}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ports, err := p.DelayPorts()
	if err != nil {
		t.Fatal(err)
	}
	if len(ports) != 2*len(p.Links) {
		t.Fatalf("%d delay ports for %d links", len(ports), len(p.Links))
	}
	seen := map[string]bool{}
	wantBuf := int64(2*100e6/8*500e-6) + 1<<20
	for _, dp := range ports {
		seen[dp.Node+"/"+dp.Iface] = true
		if len(dp.Classes) != 1 || dp.Classes[0] != 500*time.Microsecond || len(dp.Buffers) != 1 || dp.Buffers[0] != wantBuf {
			t.Errorf("%s/%s: classes %v buffers %v, want [500us] [%d]", dp.Node, dp.Iface, dp.Classes, dp.Buffers, wantBuf)
		}
		if len(dp.Sources) != len(p.Hosts()) || dp.Peer == "" || dp.Host != "" {
			t.Errorf("%s/%s: %d sources of %d hosts, peer %q, host %q", dp.Node, dp.Iface, len(dp.Sources), len(p.Hosts()), dp.Peer, dp.Host)
		}
	}
	for _, l := range p.Links {
		for _, e := range []Port{l.A, l.B} {
			if !seen[e.Node+"/"+e.Iface] {
				t.Errorf("no delay port at %s/%s", e.Node, e.Iface)
			}
		}
	}
}

// A pair whose shortest paths differ in delay (one leaf-spine link slower)
// is refused under path placement, where the line cannot tell which path
// a packet took, and accepted under link placement with both delays.
func TestUnequalECMPDelays(t *testing.T) {
	for _, placement := range []string{"", PlaceLink} {
		p, err := Parse("ls.yaml", []byte(leafSpineDelayed))
		if err != nil {
			t.Fatal(err)
		}
		p.DelayPlacement = placement
		for i, l := range p.Links {
			if l.Tier == "leaf_spine" {
				p.Links[i].Delay *= 3 // the first leaf's link to the first spine
				break
			}
		}
		pds, err := p.PathDelays()
		if placement == "" {
			if err == nil || !strings.Contains(err.Error(), "differ in delay") {
				t.Errorf("path placement: %v, want the pair refused", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("link placement: %v", err)
		}
		unequal := 0
		for _, pd := range pds {
			if pd.MaxOneWay != pd.OneWay {
				unequal++
				if pd.OneWay != 4*500*time.Microsecond || pd.MaxOneWay != 6*500*time.Microsecond {
					t.Errorf("%s -> %s: one way %v to %v, want 2ms to 3ms", pd.Src, pd.Dst, pd.OneWay, pd.MaxOneWay)
				}
			}
		}
		if unequal == 0 {
			t.Error("link placement: no pair with unequal paths")
		}
		if _, err := p.DelayPorts(); err != nil {
			t.Errorf("link placement delay ports: %v", err)
		}
	}
}
