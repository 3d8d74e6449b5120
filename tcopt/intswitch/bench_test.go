package intswitch

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"cclab/internal/units"
	"cclab/tcopt/agent"
)

// BenchmarkFiveSwitchThroughput measures what the INT switch and the host
// agent cost a bulk TCP flow across five switches shaped at 1 Gbit/s
// (offloads on, as a run has them): rounds of iperf3 alternate between a
// bare path and the same path with the switch attached to every port and
// the flow in the agent's cgroup. It reports goodput, which the 40-byte
// option alone lowers by 40/1460 = 2.7 % (TCP timestamps off), the
// rate on the wire of the last port, and the switch programs' own cost
// per run (the kernel's BPF run-time statistics, on for the benchmark
// only): the enqueue counter and the transmit tracepoint run once per
// packet and port. Run it with
//
//	go test -run '^$' -bench FiveSwitch -benchtime 1x ./tcopt/intswitch/
func BenchmarkFiveSwitchThroughput(b *testing.B) { fiveSwitchThroughput(b, PFC{}) }

// BenchmarkFiveSwitchPFC is the same with PFC detection on every switch
// (static thresholds no queue reaches: the accounting's cost alone).
func BenchmarkFiveSwitchPFC(b *testing.B) {
	fiveSwitchThroughput(b, PFC{Mode: PFCStatic, Xoff: 1 << 30, Xon: 1 << 29})
}

func fiveSwitchThroughput(b *testing.B, pfc PFC) {
	const rounds, seconds = 5, 2
	stats, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		b.Fatalf("BPF run-time statistics: %v", err)
	}
	defer stats.Close()
	for b.Loop() {
		var bare, with, bareWire, withWire float64
		var enqNs, enqRuns, xmitNs, xmitRuns float64
		l := newLine(b, 5, linkOpts{rate: units.Rate(1e9), buffer: 256 << 10, offloads: true})
		ag, err := agent.Attach(context.Background(), l.id, agent.Options{
			EchoPinDir: filepath.Join(l.id.BPFDir(), "cc"),
		})
		if err != nil {
			b.Fatal(err)
		}
		plain := l.senderCgroup(0)
		qd := l.qdiscReader("s5", "r5")
		for r := 0; r < rounds; r++ {
			for _, on := range []bool{false, true} {
				cg := plain
				var sw *Switch
				if on {
					cg = ag.Cgroup()
					cfg := l.cfg()
					cfg.PFC = pfc
					if sw, err = Attach(context.Background(), cfg); err != nil {
						b.Fatal(err)
					}
				}
				port := 5300 + 2*r
				if on {
					port++
				}
				l.iperfServer("rcv", l.rcvAddr, port)
				before := qd.read(b)
				bps, secs := l.iperfRun(l.iperfClient("snd", cg, l.rcvAddr, port, "-t", fmt.Sprint(seconds)))
				// The rate on the wire of the last port (headers, options
				// and all), over the time iperf3 measured.
				wire := float64(qd.read(b).bytes-before.bytes) * 8 / secs
				if on {
					st, err := sw.Stats()
					if err != nil {
						b.Fatal(err)
					}
					if p := portStats(b, st, "s5", "r5"); p.Stamped == 0 {
						b.Fatal("the switch stamped nothing")
					}
					for _, c := range []struct {
						prog     *ebpf.Program
						ns, runs *float64
					}{{sw.tcProgs[0].Enqueue, &enqNs, &enqRuns}, {sw.objs.IntSwitchXmit, &xmitNs, &xmitRuns}} {
						ps, err := c.prog.Stats()
						if err != nil {
							b.Fatal(err)
						}
						*c.ns += float64(ps.Runtime.Nanoseconds())
						*c.runs += float64(ps.RunCount)
					}
					sw.Close()
					with += bps / rounds
					withWire += wire / rounds
				} else {
					bare += bps / rounds
					bareWire += wire / rounds
				}
				b.Logf("round %d, switch+agent %v: goodput %.0f Mbit/s, last port %.0f Mbit/s", r, on, bps/1e6, wire/1e6)
			}
		}
		ag.Close()
		b.ReportMetric(bare/1e6, "bare-goodput-Mbit/s")
		b.ReportMetric(with/1e6, "int-goodput-Mbit/s")
		b.ReportMetric(100*with/bare, "%goodput-kept")
		b.ReportMetric(100*withWire/bareWire, "%wire-rate-kept")
		b.ReportMetric(enqNs/enqRuns, "enqueue-ns/run")
		b.ReportMetric(xmitNs/xmitRuns, "xmit-ns/run")
	}
}
