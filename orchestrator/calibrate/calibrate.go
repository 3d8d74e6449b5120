// Package calibrate measures the round-trip time of each class of path of
// a built network, idle and under load, and derives the laws' time
// constants from it (docs/calibration.md). The emulated fabric adds the
// CPU's time to every packet's path: configured delays alone would hand
// the laws a base RTT unrelated to the path they run on.
package calibrate

import (
	"context"
	"fmt"
	"io"
	"time"

	"cclab/internal/icmpecho"
	"cclab/orchestrator/flows"
	"cclab/topology"
	"cclab/topology/ideal"
)

// A Class is the paths between hosts with the same number of switches
// between them, measured on one pair of them (the one with the longest
// configured delay, first in plan order).
type Class struct {
	Switches int    `json:"switches"`
	Pairs    int    `json:"pairs"` // host pairs in the class
	Src      string `json:"src"`
	Dst      string `json:"dst"`
	// ConfiguredNs is the configured propagation RTT: twice the one-way
	// delay of the measured pair's path (of its longest shortest path,
	// where link placement lets ECMP paths of different delays be: the
	// flow may take it).
	ConfiguredNs int64 `json:"configured_rtt_ns"`
	// BottleneckBps is the slowest link of the path; the load runs at
	// LoadShare of it.
	BottleneckBps uint64 `json:"bottleneck_bps"`
	LoadBps       uint64 `json:"load_bps"`        // paced at
	AchievedBps   uint64 `json:"achieved_bps"`    // what the receiver got
	Idle          RTT    `json:"idle_rtt"`        // kernel RTT, nothing else running
	Loaded        RTT    `json:"loaded_rtt"`      // kernel RTT beside the paced flow
	FloorNs       int64  `json:"loaded_floor_ns"` // the loaded echo median
	// MTUSerialiseNs is one full-size frame's serialisation at the
	// bottleneck: the time a packet of a line-rate flow is held there even
	// with no queue, which a small echo beside a paced load is not.
	MTUSerialiseNs int64 `json:"mtu_serialise_ns"`
	// TCPFloorNs is the paced load's smoothed RTT (tcpi_rtt), median of
	// its readings while the loaded echoes ran. Recorded, not derived
	// from: srtt takes the oldest segment an ACK covers, so it carries the
	// receiver's delayed-ACK wait, which the laws' samples (the newest
	// segment's) do not (docs/calibration.md). 0 if it could not be read.
	TCPFloorNs int64 `json:"tcp_floor_ns"`
}

// RTT summarises round-trip samples in nanoseconds.
type RTT = icmpecho.RTT

// Result is a calibration of one network.
type Result struct {
	Classes []Class `json:"classes"`
	// ElapsedNs is how long it took.
	ElapsedNs int64 `json:"elapsed_ns"`
}

// Options configure Run.
type Options struct {
	Hosts map[string]flows.Host // every host of the plan
	// Port is the TCP port the load flows use (default 5998).
	Port uint16
	// LoadShare of the bottleneck rate the load is paced at (default 0.9).
	LoadShare float64
	// Samples per RTT measurement (default 100 idle, 200 loaded).
	IdleSamples, LoadedSamples int
	// Warmup of the load before sampling (default 100 ms).
	Warmup time.Duration
	Log    io.Writer
}

// Classes groups the plan's host pairs by switch count and picks each
// class's pair to measure.
func Classes(plan *topology.Plan) ([]Class, error) {
	paths, err := plan.PathDelays()
	if err != nil {
		return nil, err
	}
	var out []Class
	at := map[int]int{}
	for _, pd := range paths {
		i, ok := at[pd.Switches]
		if !ok {
			i = len(out)
			at[pd.Switches] = i
			out = append(out, Class{Switches: pd.Switches, Src: pd.Src, Dst: pd.Dst, ConfiguredNs: 2 * int64(pd.MaxOneWay)})
		}
		c := &out[i]
		c.Pairs++
		if 2*int64(pd.MaxOneWay) > c.ConfiguredNs {
			c.Src, c.Dst, c.ConfiguredNs = pd.Src, pd.Dst, 2*int64(pd.MaxOneWay)
		}
	}
	for i := range out {
		links, err := plan.Path(out[i].Src, out[i].Dst)
		if err != nil {
			return nil, err
		}
		for j, l := range links {
			if r := uint64(l.Rate); j == 0 || r < out[i].BottleneckBps {
				out[i].BottleneckBps = r
			}
		}
		// A full-size frame on the wire, as the ideal FCT counts one per hop.
		frame := uint64(ideal.DefaultFraming.MSS + ideal.DefaultFraming.HeaderBytes)
		if b := out[i].BottleneckBps; b > 0 {
			out[i].MTUSerialiseNs = int64(frame * 8 * 1e9 / b)
		}
	}
	// Shortest paths first.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Switches < out[j-1].Switches; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, nil
}

// Run calibrates every class of the plan's paths on its built network, one
// class at a time: the idle RTT, then the RTT while a flow paced at
// LoadShare of the bottleneck runs along the same path.
func Run(ctx context.Context, plan *topology.Plan, opt Options) (*Result, error) {
	if opt.Port == 0 {
		opt.Port = 5998
	}
	if opt.LoadShare == 0 {
		opt.LoadShare = 0.9
	}
	if opt.IdleSamples == 0 {
		opt.IdleSamples = 100
	}
	if opt.LoadedSamples == 0 {
		opt.LoadedSamples = 200
	}
	if opt.Warmup == 0 {
		opt.Warmup = 100 * time.Millisecond
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	begin := time.Now()
	classes, err := Classes(plan)
	if err != nil {
		return nil, err
	}
	for i := range classes {
		c := &classes[i]
		src, ok1 := opt.Hosts[c.Src]
		dst, ok2 := opt.Hosts[c.Dst]
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("calibrate: hosts %s and %s are not in the network", c.Src, c.Dst)
		}
		if err := measure(ctx, c, src, dst, uint16(i), opt); err != nil {
			return nil, fmt.Errorf("calibrate %d-switch paths (%s -> %s): %w", c.Switches, c.Src, c.Dst, err)
		}
		fmt.Fprintf(opt.Log, "calibrate: %d-switch paths (%s -> %s): configured %v, idle %v, loaded %v, floor %v (TCP srtt %v) at %.0f Mbit/s\n",
			c.Switches, c.Src, c.Dst, time.Duration(c.ConfiguredNs), time.Duration(c.Idle.P50Ns), time.Duration(c.Loaded.P50Ns),
			time.Duration(c.Floor()), time.Duration(c.TCPFloorNs), float64(c.AchievedBps)/1e6)
	}
	return &Result{Classes: classes, ElapsedNs: int64(time.Since(begin))}, nil
}

// echoInterval spaces the calibration's echo requests: 200 of them take
// 0.2 s on any path instead of 200 round trips (2.5 s at 12 ms).
const echoInterval = time.Millisecond

func measure(ctx context.Context, c *Class, src, dst flows.Host, id uint16, opt Options) error {
	// Echoes wait at most a generous multiple of what the path should
	// take; a lost one is counted, not waited for.
	timeout := 20*time.Millisecond + 4*time.Duration(c.ConfiguredNs)
	p, err := icmpecho.New(src.Netns, src.Addr, dst.Addr, 0xcc00|id)
	if err != nil {
		return err
	}
	defer p.Close()
	if err := p.Reach(ctx, timeout, 3*time.Second); err != nil {
		return err
	}
	if c.Idle, err = p.Stream(ctx, opt.IdleSamples, echoInterval, timeout); err != nil {
		return err
	}
	c.LoadBps = uint64(opt.LoadShare * float64(c.BottleneckBps))
	ld, err := startLoad(ctx, src, dst, opt.Port, c.LoadBps/8)
	if err != nil {
		return err
	}
	time.Sleep(opt.Warmup)
	done := make(chan struct{})
	tcp := make(chan int64, 1)
	go func() {
		r, _ := ld.sampleTCPRTT(time.Millisecond, done)
		tcp <- r
	}()
	c.Loaded, err = p.Stream(ctx, opt.LoadedSamples, echoInterval, timeout)
	close(done)
	c.TCPFloorNs = <-tcp
	c.AchievedBps = ld.stop()
	if err != nil {
		return err
	}
	if c.Loaded.Samples == 0 || c.Idle.Samples == 0 {
		return fmt.Errorf("no echo came back (idle %d of %d lost, loaded %d of %d)", c.Idle.Lost, opt.IdleSamples, c.Loaded.Lost, opt.LoadedSamples)
	}
	c.FloorNs = c.Loaded.P50Ns
	return nil
}
