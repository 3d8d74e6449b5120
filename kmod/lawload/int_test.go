package lawload

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cclab/internal/units"
	"cclab/tcopt/agent"
	"cclab/tcopt/intswitch"
)

// HPCC and PowerTCP follow the INT telemetry end to end: the software
// switch stamps the bottleneck port's queue and counters, the receiver
// echoes them, the host agent stores the echo in cclab_int_echo (shared
// through the test's pin directory), and the law moves its window on it,
// keeping the queue near empty at a high utilisation (where Reno fills the
// buffer to ~12 ms).
func TestINTLawsFollowTelemetry(t *testing.T) {
	for _, law := range []string{"hpcc", "powertcp"} {
		t.Run(law, func(t *testing.T) {
			// HPCC's T sits slightly above the path's base RTT (~150 us
			// here); PowerTCP's tau is the base RTT itself.
			settings := map[string][]string{
				"hpcc":     {"host_bw_mbps=100", "base_rtt_ns=300000"},
				"powertcp": {"host_bw_mbps=100", "base_rtt_ns=150000"},
			}[law]
			r := loadForTest(t, law, settings...)
			pinDir := filepathDir(r.Pin)
			n := newTestNet(t, testRate, testBuf, false)
			// As a run with INT does (tcopt/README.md): TCP timestamps off
			// leave the whole 40 bytes of option space, so an echo still
			// fits beside SACK blocks.
			for _, ns := range []string{n.a, n.b} {
				run(t, "ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.tcp_timestamps=0")
			}

			// Cleanups run last first: this one after the agent's Close
			// and before the law's unload. The law still reads the echo
			// map, so the agent, not its last user, must leave the pin.
			t.Cleanup(func() {
				if _, err := os.Stat(filepath.Join(pinDir, agent.EchoMapName)); err != nil {
					t.Errorf("the agent's Close unpinned the echo map the law uses: %v", err)
				}
			})
			ag, err := agent.Attach(context.Background(), n.id, agent.Options{EchoPinDir: pinDir})
			if err != nil {
				t.Fatalf("INT host agent: %v", err)
			}
			t.Cleanup(func() {
				if err := ag.Close(); err != nil {
					t.Errorf("close agent: %v", err)
				}
			})
			// Sockets this process opens from now on carry the option.
			if err := ag.AddProcess(os.Getpid()); err != nil {
				t.Fatal(err)
			}
			rate, _ := units.ParseRate("100Mbit")
			nsOf := map[string]string{"r": n.r, "b": n.b}
			sw, err := intswitch.Attach(context.Background(), intswitch.Config{
				Netns: func(node string) string { return nsOf[node] },
				Ports: []intswitch.PortConfig{{Node: "r", Iface: bottleneckDev, PeerNode: "b", PeerIface: "vb", Rate: rate}},
			})
			if err != nil {
				t.Fatalf("INT switch: %v", err)
			}
			t.Cleanup(func() { sw.Close() })

			stop := startTrace(t, r)
			f := n.flows(t, context.Background(), r.Name, 1, 0, 2*time.Second)[0]
			rows := stop()
			st, err := ag.Stats()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("agent: %+v", st)
			mbps := float64(f.bytesBetween(time.Second, 2*time.Second)) * 8 / 1e6
			srtt := f.medianRTT(time.Second)
			t.Logf("%s: %.1f Mbit/s, median srtt %d us", r.Name, mbps, srtt)
			if len(rows) < 100 {
				t.Fatalf("%d trace rows", len(rows))
			}
			// Telemetry reached the law: most ACKs carry a usable echo, and
			// the window moved on it. A law window below the glue's
			// two-segment floor (PowerTCP's line-rate window here is 1875 B)
			// leaves snd_cwnd still and is enforced by the pacing rate
			// (window / tau or W / T), so a change of either counts.
			noINT, moved := 0, 0
			cw := col(rows, 3)
			pace := col(rows, 4)
			sig := col(rows, 5)
			for i, row := range rows {
				if strings.Contains(row[7], "NO_INT") {
					noINT++
				}
				if i > 0 && (cw[i] != cw[i-1] || pace[i] != pace[i-1]) {
					moved++
				}
			}
			t.Logf("%d ACKs traced, %d without INT, window changed on %d; signal first %d last %d",
				len(rows), noINT, moved, sig[0], sig[len(sig)-1])
			if noINT*2 > len(rows) {
				t.Errorf("%d of %d ACKs had no INT echo", noINT, len(rows))
			}
			if moved < 10 {
				t.Errorf("the window changed only %d times", moved)
			}
			if mbps < 0.5*testRate {
				t.Errorf("%.1f Mbit/s over a %d Mbit/s bottleneck", mbps, testRate)
			}
			if srtt > 3000 {
				t.Errorf("median srtt %d us: the law did not keep the queue short", srtt)
			}
		})
	}
}
