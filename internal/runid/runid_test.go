package runid

import "testing"

func TestNetnsRoundTrip(t *testing.T) {
	id := New()
	got, node, ok := FromNetns(id.Netns("edge0-1"))
	if !ok || got != id || node != "edge0-1" {
		t.Fatalf("FromNetns(%q) = %q %q %v", id.Netns("edge0-1"), got, node, ok)
	}
	for _, foreign := range []string{"cclab", "cclab-", "cclab-abc", "cclab-ABC-h1", "other-abc-h1", "cclab-abc-"} {
		if _, _, ok := FromNetns(foreign); ok {
			t.Errorf("FromNetns(%q) claimed a foreign namespace", foreign)
		}
	}
}

func TestParse(t *testing.T) {
	if _, err := Parse("run1"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "Run", "a-b", "abcdefghijklm"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}
