package health

import (
	"context"
	"testing"
	"time"

	"cclab/internal/testnet"
	"cclab/orchestrator/flows"
)

func TestPingPongAndSampler(t *testing.T) {
	ea, eb := testnet.Pair(t)
	a, b := flows.Host{Netns: ea.Netns, Addr: ea.Addr}, flows.Host{Netns: eb.Netns, Addr: eb.Addr}
	rtt, err := PingPong(context.Background(), "a", a, "b", b, 7000, 200)
	if err != nil {
		t.Fatal(err)
	}
	if rtt.Samples != 200 || rtt.MinNs <= 0 || rtt.MinNs > rtt.MedianNs || rtt.MedianNs > rtt.P99Ns || rtt.MedianNs > int64(5*time.Millisecond) {
		t.Fatalf("rtt %+v", rtt)
	}
	t.Logf("veth RTT floor: min %v median %v p99 %v", time.Duration(rtt.MinNs), time.Duration(rtt.MedianNs), time.Duration(rtt.P99Ns))

	ia, ib := ea.Iface, eb.Iface
	// Configured at 100 Mbit/s, the unshaped veth carries far more: the
	// a->b egress shows as loaded with a ratio above 1, b->a (ACKs only)
	// does not. (Its configured rate is 10 Gbit/s: the ACKs of a flow
	// of tens of Gbit/s on a quiet machine reach 50 Mbit/s.)
	s := StartSampler([]LinkEnd{
		{Node: "a", Netns: a.Netns, Iface: ia, ConfigBps: 100e6},
		{Node: "b", Netns: b.Netns, Iface: ib, ConfigBps: 10e9},
	}, SamplerOptions{Interval: 50 * time.Millisecond, Namespaces: []string{a.Netns, b.Netns}})
	res, err := flows.Run(context.Background(), []flows.Spec{{Src: "a", Dst: "b", Stop: 400 * time.Millisecond}},
		flows.Options{Hosts: map[string]flows.Host{"a": a, "b": b}})
	if err != nil || !res[0].OK() {
		t.Fatalf("flow: %v %+v", err, res)
	}
	r := s.Stop()
	if len(r.Errors) > 0 || len(r.Links) != 1 || r.Links[0].Node != "a" {
		t.Fatalf("report %+v", r)
	}
	l := r.Links[0]
	if l.TxBytes < res[0].Bytes || l.Ratio < 1 || l.MeanBps > l.PeakBps {
		t.Fatalf("link %+v, flow carried %d bytes", l, res[0].Bytes)
	}
	if r.CPU.CPUs < 1 || r.CPU.Windows < 5 || r.CPU.MeanBusy <= 0 || r.CPU.MaxBusy < r.CPU.MeanBusy*0.5 || r.CPU.MaxOneCPU < r.CPU.MaxBusy {
		t.Fatalf("cpu %+v", r.CPU)
	}
	t.Logf("link %+v cpu %+v", l, r.CPU)
}
