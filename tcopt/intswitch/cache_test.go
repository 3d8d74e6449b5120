package intswitch

import (
	"testing"
	"time"

	"cclab/internal/units"
)

// A switch attached from a Cache to a new fabric runs the programs the
// previous switch verified, starts from empty maps (no counter, clock or
// port of the old fabric) and stamps the new path as a fresh switch does.
func TestCacheReusesVerifiedPrograms(t *testing.T) {
	cache := &Cache{}
	run := func(l *line) (*Switch, []PortStats) {
		t.Helper()
		capt := l.mirrorCapture("rcv", l.rcvIface())
		cfg := l.cfg()
		cfg.Attach, cfg.Cache = AttachTCX, cache
		begin := time.Now()
		sw := attach(t, cfg)
		t.Logf("attach: %v", time.Since(begin))
		fresh, err := sw.Stats()
		if err != nil {
			t.Fatal(err)
		}
		sendThroughLine(t, l, capt, sw, "2M", 1000, 3, false)
		return sw, fresh
	}
	progID := func(sw *Switch) uint32 {
		info, err := sw.tcProgs[0].Stamp.Info()
		if err != nil {
			t.Fatal(err)
		}
		id, _ := info.ID()
		return uint32(id)
	}

	first, _ := run(newLine(t, 3, linkOpts{rate: units.Rate(1e9), buffer: 256 << 10}))
	id := progID(first)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second, fresh := run(newLine(t, 3, linkOpts{rate: units.Rate(1e9), buffer: 256 << 10}))
	if got := progID(second); got != id {
		t.Errorf("the second switch loaded its own stamper (program %d, the first's %d)", got, id)
	}
	for _, p := range fresh {
		if p.Transmitted > 64<<10 || p.Stamped > 0 || p.ClockLeadMax > 0 {
			t.Errorf("port %s/%s starts with the old fabric's counters: %+v", p.Node, p.Iface, p)
		}
	}
	// Closing the Cache first: the attached switch frees its own set.
	if err := cache.Close(); err != nil {
		t.Fatal(err)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	if len(cache.idle) != 0 {
		t.Errorf("a closed cache kept %d sets", len(cache.idle))
	}
}
