// Package delaycheck measures what a delay engine adds to a topology's
// round trip: the same plan built twice, as it is and with every delay
// zeroed, and the idle RTT between two hosts of each. The VM test compares
// netem in the guest with cclab's delay line on the host this way
// (issue 11: both must give the same base RTT within the line's accuracy
// bar); subtracting the undelayed RTT takes out each machine's own
// processing time (the guest runs under TCG).
package delaycheck

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"cclab/internal/icmpecho"
	"cclab/internal/runid"
	"cclab/orchestrator/delay"
	"cclab/orchestrator/netbuild"
	"cclab/topology"
)

// Result is one topology's measurement.
type Result struct {
	Engine delay.Engine
	// Configured is the propagation RTT of the src-dst path.
	Configured time.Duration
	// Delayed and Undelayed are the idle RTT medians with the plan's
	// delays and without them; Added is their difference.
	Delayed, Undelayed, Added time.Duration
}

// Measure builds plan with opt twice and times samples echoes from src to
// dst in each build.
func Measure(ctx context.Context, plan *topology.Plan, src, dst string, opt netbuild.Options, samples int) (Result, error) {
	var r Result
	pds, err := plan.PathDelays()
	if err != nil {
		return r, err
	}
	for _, pd := range pds {
		if pd.Src == src && pd.Dst == dst {
			r.Configured = 2 * pd.OneWay
		}
	}
	if r.Configured == 0 {
		return r, fmt.Errorf("delaycheck: no delayed path from %s to %s", src, dst)
	}
	if r.Engine, err = opt.DelayEngine.Resolve(); err != nil {
		return r, err
	}
	bare := *plan
	bare.Links = append([]topology.Link(nil), plan.Links...)
	for i := range bare.Links {
		bare.Links[i].Delay = 0
	}
	if r.Delayed, err = idleRTT(ctx, plan, src, dst, opt, samples, false); err != nil {
		return r, err
	}
	// Without delays there is no line, but its packet steering stays: on
	// an idle machine handing packets to a sleeping CPU costs its wake-up,
	// which is the steering's, not the delay's.
	if r.Undelayed, err = idleRTT(ctx, &bare, src, dst, opt, samples, r.Engine == delay.EngineLine); err != nil {
		return r, err
	}
	r.Added = r.Delayed - r.Undelayed
	return r, nil
}

// idleRTT builds plan, serves its delay line if it has one (or only
// steers packet work as the line would, with steer), and returns the
// median echo RTT from src to dst.
func idleRTT(ctx context.Context, plan *topology.Plan, src, dst string, opt netbuild.Options, samples int, steer bool) (time.Duration, error) {
	s, ok1 := plan.Node(src)
	d, ok2 := plan.Node(dst)
	if !ok1 || !ok2 {
		return 0, fmt.Errorf("delaycheck: no nodes %s and %s in %s", src, dst, plan.Name)
	}
	net, err := netbuild.Up(ctx, runid.New(), plan, opt)
	if err != nil {
		return 0, err
	}
	defer net.Down(context.WithoutCancel(ctx))
	srv, err := net.ServeDelay(ctx, delay.ServeOptions{CPU: -1, Steer: net.Namespaces()})
	if err != nil {
		return 0, err
	}
	if srv != nil {
		defer srv.Stop()
	}
	if steer && runtime.NumCPU() > 1 {
		if err := delay.Steer(net.Namespaces(), runtime.NumCPU()-1); err != nil {
			return 0, err
		}
	}
	p, err := icmpecho.New(net.Netns(src), s.Addr, d.Addr, 0xdc01)
	if err != nil {
		return 0, err
	}
	defer p.Close()
	// The first echoes resolve the neighbours; they are not samples.
	if err := p.Reach(ctx, time.Second, 5*time.Second); err != nil {
		return 0, err
	}
	rtt, err := p.Sample(ctx, samples, time.Millisecond, time.Second)
	if err != nil {
		return 0, err
	}
	if rtt.Samples == 0 {
		return 0, fmt.Errorf("delaycheck: no echo came back from %s (%d lost)", dst, rtt.Lost)
	}
	return time.Duration(rtt.P50Ns), nil
}

// Agree reports whether two added delays for the same configured RTT
// agree within the delay line's median bar, per direction 5 % + 10 us, so
// 5 % of the RTT + 20 us.
func Agree(a, b, configured time.Duration) (bool, time.Duration) {
	return within(a, b, configured/20+20*time.Microsecond)
}

// AgreeP99 is Agree with the line's p99 bar, per direction 15 % + 100 us.
func AgreeP99(a, b, configured time.Duration) (bool, time.Duration) {
	return within(a, b, configured*15/100+200*time.Microsecond)
}

func within(a, b, bound time.Duration) (bool, time.Duration) {
	diff := a - b
	if diff < 0 {
		diff = -diff
	}
	return diff <= bound, bound
}
