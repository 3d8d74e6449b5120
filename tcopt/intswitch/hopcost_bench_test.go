package intswitch

import (
	"context"
	"fmt"
	"testing"

	"cclab/internal/cpustat"
	"cclab/internal/units"
)

// BenchmarkPacketHop measures what one switch hop costs a packet in CPU
// time: a TCP flow through lines of 1 and 5 switches whose ports are
// shaped as a run's are (HTB over a bfifo, here at 1 Gbit/s so that a few
// seconds carry a quarter of a million packets), bare and with the INT
// switch attached to every port, with segmentation offloads off: every
// skb is one wire packet, the per-packet cost a small flow pays (a run's
// long flows cross the fabric as GSO packets of 2.5-4 wire packets,
// docs/performance.md). The busy time of all CPUs (/proc/stat) over the
// flow, per wire packet (1514 B frames at the last port), is c(1) and
// c(5); a hop costs (c(5) - c(1)) / 4, the hosts' share cancelling out. docs/performance.md ("Where the packet CPU goes") holds its figures;
// run it on an idle machine with
//
//	go test -run '^$' -bench PacketHop -benchtime 1x ./tcopt/intswitch/
func BenchmarkPacketHop(b *testing.B) {
	const seconds, rounds = 3, 4
	for b.Loop() {
		cost := map[bool]map[int]float64{false: {}, true: {}}
		for _, hops := range []int{1, 5} {
			l := newLine(b, hops, linkOpts{rate: units.Rate(1e9), buffer: 640 << 10})
			qd := l.qdiscReader(l.lastSwitch(), l.lastPort())
			plain := l.senderCgroup(0)
			for r := 0; r < rounds; r++ {
				for _, on := range []bool{false, true} {
					var sw *Switch
					if on {
						var err error
						if sw, err = Attach(context.Background(), l.cfg()); err != nil {
							b.Fatal(err)
						}
					}
					port := 5400 + 2*r
					if on {
						port++
					}
					l.iperfServer("rcv", l.rcvAddr, port)
					q0 := qd.read(b)
					c0, _, err := cpustat.Read()
					if err != nil {
						b.Fatal(err)
					}
					l.iperfRun(l.iperfClient("snd", plain, l.rcvAddr, port, "-t", fmt.Sprint(seconds)))
					c1, _, err := cpustat.Read()
					if err != nil {
						b.Fatal(err)
					}
					q1 := qd.read(b)
					if sw != nil {
						sw.Close()
					}
					wire := float64(q1.bytes-q0.bytes) / 1514
					if wire < 10000 {
						b.Fatalf("%d switches: %0.f wire packets in %d s", hops, wire, seconds)
					}
					// Jiffies are 10 ms of one CPU.
					ns := float64(c1.Busy-c0.Busy) * 1e7 / wire
					cost[on][hops] += ns / rounds
					b.Logf("%d switches, switch attached %v: %.0f wire packets, %.0f ns of CPU each", hops, on, wire, ns)
				}
			}
		}
		b.ReportMetric((cost[false][5]-cost[false][1])/4, "ns/wire-pkt-hop-bare")
		b.ReportMetric((cost[true][5]-cost[true][1])/4, "ns/wire-pkt-hop-switch")
		b.ReportMetric(cost[true][1], "ns/wire-pkt-1-switch-path")
	}
}
