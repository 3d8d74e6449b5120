package delaycheck

import (
	"context"
	"testing"

	"cclab/orchestrator/delay"
	"cclab/orchestrator/netbuild"
	"cclab/topology"
)

// The delay line adds the configured RTT to the VM test's topologies.
// Its median bar holds under load (orchestrator/delay TestLineAccuracy);
// on an idle path each direction pays 50-70 us more than the line's own
// lateness (12-16 us): the crossing into the sink before the kernel's
// stamp, and the wake-up of the packet CPU, which went idle while the line
// held the packet (keeping it busy cut 20-30 us). So an idle round trip is
// held to the p99 bar.
func TestLineAddsTheConfiguredRTT(t *testing.T) {
	for _, f := range []string{"../testdata/vm-line-1.yaml", "../testdata/vm-line-3.yaml"} {
		plan, err := topology.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		opt := netbuild.DefaultOptions()
		opt.DelayEngine = delay.EngineLine
		r, err := Measure(context.Background(), plan, "h0", "h1", opt, 100)
		if err != nil {
			t.Fatal(err)
		}
		ok, bound := AgreeP99(r.Added, r.Configured, r.Configured)
		t.Logf("%s: %s adds %v (%v - %v) for %v configured, bound %v", f, r.Engine, r.Added, r.Delayed, r.Undelayed, r.Configured, bound)
		if !ok || r.Engine != delay.EngineLine {
			t.Errorf("%s: %s adds %v for %v configured", f, r.Engine, r.Added, r.Configured)
		}
	}
}
