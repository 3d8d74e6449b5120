package runner

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"cclab/internal/runid"
	"cclab/kmod/lawload"
	"cclab/rundir"
	"cclab/tcopt"
	"cclab/tcopt/agent"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// A 4:1 incast through the software switch with INT on: the switch samples
// a real queue at the receiver's port into queues.csv, stamps one record
// (star: one switch) into every data packet, the receiver's host agent
// echoes them, the senders parse the echoes, and this process leaves the
// run's cgroup again.
func TestTelemetryRun(t *testing.T) {
	exp := writeExperiment(t, "star-16.yaml", `timeout: 20s
switch:
  int: true
  int_all: true   # cubic reads no INT: stamp it all the same
  queue_sample: 1ms
hosts: {gso: false, tso: false}
workload:
  - name: incast
    incast: {dst: h0, fan_in: 4, size: 500KB, start: 10ms}
`)
	res, dir, laws := runSwitchExperiment(t, exp)
	// No law uses the echo map: the agent, its last user, unpinned it.
	if _, err := os.Stat(filepath.Join(laws.PinDir, agent.EchoMapName)); err == nil {
		t.Errorf("the run left the echo map pinned in %s", laws.PinDir)
	}
	if cg, _ := os.ReadFile("/proc/self/cgroup"); strings.Contains(string(cg), string(res.ID)) {
		t.Fatalf("still in the run's cgroup: %s", cg)
	}
	if res.Runs[0].OK != 4 {
		t.Fatalf("flows %+v", res.Runs[0])
	}

	var rj struct {
		Framing    rundir.Framing `json:"framing"`
		Extensions struct {
			Switch TelemetryJSON `json:"switch"`
		} `json:"extensions"`
		Errors []string `json:"errors"`
	}
	readRunJSON(t, dir, &rj)
	if len(rj.Errors) > 0 {
		t.Fatalf("run errors: %v", rj.Errors)
	}
	if rj.Framing.MSS != 1420 {
		t.Fatalf("framing %+v, want MSS 1420 (40 option bytes for INT)", rj.Framing)
	}
	sw := rj.Extensions.Switch
	var stamped uint64
	for _, ps := range sw.Ports {
		stamped += ps.Stamped
	}
	if !sw.INT || len(sw.Ports) != 17*1 || stamped == 0 || sw.QueueRows == 0 {
		t.Fatalf("switch extension: int %v, %d ports, %d stamped, %d queue rows", sw.INT, len(sw.Ports), stamped, sw.QueueRows)
	}
	if sw.Agent == nil || sw.Agent.OptionsWritten == 0 || sw.Agent.EchoesWritten == 0 || sw.Agent.EchoesParsed == 0 {
		t.Fatalf("agent stats %+v", sw.Agent)
	}

	// The incast queues at s0 -> h0: queues.csv must show it.
	var peak uint64
	for _, r := range readCSV(t, filepath.Join(dir, "queues.csv"))[1:] {
		if r[1] == "s0" && r[2] == "h0" {
			q, err := strconv.ParseUint(r[3], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			peak = max(peak, q)
		}
	}
	if peak < 10_000 {
		t.Fatalf("peak queue at s0->h0 is %d B; a 4:1 incast of 500 KB flows should queue", peak)
	}

	// h0's ACKs echo one stamped record with the port's rate. (Its capture
	// sees data packets before the last hop's record: packet taps run
	// before tc ingress, where the port's dequeue is stamped.)
	r := openPcap(t, filepath.Join(dir, "pcap", "h0-eth0.pcap"))
	var withRecord, maxQlen int
	src := gopacket.NewPacketSource(r, layers.LinkTypeEthernet)
	for pkt := range src.Packets() {
		tcp, _ := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if tcp == nil || tcp.SrcPort != flowPort {
			continue
		}
		for _, o := range tcp.Options {
			if o.OptionType != tcopt.Kind {
				continue
			}
			raw := append([]byte{byte(o.OptionType), o.OptionLength}, o.OptionData...)
			opt, err := tcopt.Parse(raw)
			if err != nil || !opt.Echo {
				continue
			}
			hops := opt.Hops()
			if len(hops) == 1 && hops[0].RateMbps == 100 {
				withRecord++
				maxQlen = max(maxQlen, int(hops[0].Qlen))
			}
		}
	}
	if withRecord < 100 || maxQlen < 10_000 {
		t.Fatalf("%d ACKs from h0 echo a 100 Mbit/s record (max qlen %d B)", withRecord, maxQlen)
	}
	t.Logf("peak sampled queue %d B, %d echoes captured (max echoed qlen %d B), agent %+v", peak, withRecord, maxQlen, *sw.Agent)
}

// runSwitchExperiment prepares and runs an experiment file with a laws pin
// directory of the test's own, where the INT agent shares the echo map
// (the real one belongs to the registered laws), checks that nothing of
// the run is left, and returns the result, the run directory (the parent
// of the compared ones) and the laws' options.
func runSwitchExperiment(t *testing.T, exp string) (*Result, string, lawload.Options) {
	t.Helper()
	p, id := prepareRun(t, exp)
	laws := lawload.Options{PinDir: runid.New().BPFDir()}
	t.Cleanup(func() { os.RemoveAll(laws.PinDir) })
	out := t.TempDir()
	res, err := Run(context.Background(), p, Options{Out: out, ID: id, Log: io.Discard, RTTSamples: 20, Laws: laws})
	if err != nil {
		t.Fatal(err)
	}
	noLeftovers(t, id)
	return res, filepath.Join(out, string(id)), laws
}

// INT is stamped in the runs whose flows' laws read it (directly, as a
// variant, or pinned by a workload entry in another's run), and in every
// run with int_all.
func TestStampsINTForINTLaws(t *testing.T) {
	p, err := Prepare(writeExperiment(t, "star-16.yaml", `compare: [cubic, dctcp, theta_powertcp, powertcp, hv]
skip_missing: true
laws: {}
variants:
  hv: {law: hpcc}
switch: {int: true}
workload:
  - name: l
    long: {src: h1, dst: h0, stop: 1s}
`))
	if err != nil {
		t.Fatal(err)
	}
	for cc, want := range map[string]bool{"cubic": false, "dctcp": false, "theta_powertcp": false, "powertcp": true, "hv": true} {
		if got := stampsINT(p.Exp, []string{cc}); got != want {
			t.Errorf("%s: stamps INT %v, want %v", cc, got, want)
		}
	}
	if !stampsINT(p.Exp, []string{"cubic", "qcn"}) {
		t.Error("a cubic run with a pinned qcn entry stamps no INT")
	}
	p.Exp.Switch.INTAll = true
	if !stampsINT(p.Exp, []string{"cubic"}) {
		t.Error("int_all: cubic's run stamps no INT")
	}
	p.Exp.Switch.INT, p.Exp.Switch.INTAll = false, false
	if stampsINT(p.Exp, []string{"powertcp"}) {
		t.Error("int off: powertcp's run stamps INT")
	}
}
