package delay_test

import (
	"context"
	"testing"
	"time"

	"cclab/internal/runid"
	"cclab/orchestrator/delay"
	"cclab/orchestrator/flows"
	"cclab/orchestrator/health"
	"cclab/orchestrator/netbuild"
	"cclab/orchestrator/topology"
)

const star4 = `name: star4
kind: star
star: {senders: 3}
links:
  default: {rate: 1Gbit, buffer: 256KB, delay: 250us}
`

func TestLineRTTQuick(t *testing.T) {
	plan, err := topology.Parse("star4.yaml", []byte(star4))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id := runid.New()
	opt := netbuild.DefaultOptions()
	opt.DelayEngine = delay.EngineLine
	n, err := netbuild.Up(ctx, id, plan, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Down(ctx)
	srv, err := n.ServeDelay(ctx, delay.ServeOptions{CPU: -1, Steer: n.Namespaces()})
	if err != nil {
		t.Fatal(err)
	}
	hs := plan.Hosts()
	a := flows.Host{Netns: n.Netns(hs[0].Name), Addr: hs[0].Addr}
	b := flows.Host{Netns: n.Netns(hs[1].Name), Addr: hs[1].Addr}
	rtt, err := health.PingPong(ctx, "a", a, "b", b, 7001, 200)
	st := srv.Stop()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rtt %+v", rtt)
	t.Logf("late p50 %v p99 %v lag p50 %v p99 %v totals %+v margin %v rt %d cpu %d", st.Late.Quantile(.5), st.Late.Quantile(.99), st.Lag.Quantile(.5), st.Lag.Quantile(.99), st.Totals(), st.Margin, st.RTPriority, st.CPU)
	if rtt.MedianNs < int64(time.Millisecond) || rtt.MedianNs > int64(1200*time.Microsecond) {
		t.Fatalf("median RTT %v, want ~1 ms", time.Duration(rtt.MedianNs))
	}
}
