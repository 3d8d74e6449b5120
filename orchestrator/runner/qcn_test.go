package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"cclab/analysis/pcapflows"
	"cclab/analysis/series"
	"cclab/internal/quiettest"
	"cclab/internal/runid"
	"cclab/tcopt/intswitch"
)

// QCN and QCN-T (kmod/law/qcn.h) on the QCN paper's testbed
// (topologies/qcn-star-2.yaml: two senders into one 1 Gbit/s port, Qeq
// 64 KB, 512 KB of buffer), the switch port a congestion point: both
// laws fill the link, hold its queue around Qeq (the paper's Fig. 1: the
// queue "becomes stable quickly" near the equilibrium; a law that missed
// its feedback would sit at the buffer, one that over-reacted would leave
// it empty and the link idle), and
// starve neither sender; every feedback the CP generated reached a
// sender on an ACK. Convergence to fairness takes the paper's 20 s runs:
// experiments/qcn-convergence-{2,4}.yaml.
func TestQCNHoldsTheQueueNearQeq(t *testing.T) {
	topo := qcnStar(t)
	// The rates and the queue are what CPU time stolen by the hypervisor
	// perturbs (two senders at line rate with INT on two cores): such a
	// try does not count. The feedback's accounting holds on every try.
	quiettest.Retry(t, quiettest.Policy{Failures: 2, Tries: 3}, func(int) error {
		return qcnHoldsTheQueue(t, topo)
	})
}

func qcnHoldsTheQueue(t *testing.T, topo string) error {
	id := runid.New()
	q, qt := "t"+string(id)+"q", "t"+string(id)+"qt" // registrations are machine-wide
	const qeq = 64_000
	exp := filepath.Join(t.TempDir(), "exp.yaml")
	if err := os.WriteFile(exp, []byte(fmt.Sprintf(`name: qcn
topology: %s
compare: [%s, %s]
variants:
  %s: {law: qcn}
  %s: {law: qcn_t}
laws: {}
timeout: 30s
hosts: {gso_max_size: 16KB}
switch:
  int: true
  qcn: {qeq: %dB}
workload:
  - name: a
    long: {src: h1, dst: h0, start: 0, stop: 5s}
  - name: b
    long: {src: h2, dst: h0, start: 0, stop: 5s}
`, topo, q, qt, q, qt, qeq)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := runWithOwnLaws(t, exp, id)
	var errs []error
	for _, c := range []struct{ name, law string }{{q, "qcn"}, {qt, "qcn_t"}} {
		dir := filepath.Join(out, string(id), c.name)
		var rj struct {
			ZeroNs        int64 `json:"workload_zero_ns"`
			ClockOffsetNs int64 `json:"clock_offset_ns"`
			Fidelity      struct {
				Verdict string `json:"verdict"`
			} `json:"fidelity"`
			Extensions struct {
				Switch struct {
					Ports []intswitch.PortStats `json:"ports"`
				} `json:"switch"`
			} `json:"extensions"`
		}
		readRunJSON(t, dir, &rj)
		// Each sender's rate over [1 s, 5 s], from the receiver's capture.
		from := rj.ZeroNs + rj.ClockOffsetNs + 1e9
		to := from + 4e9
		files, _ := filepath.Glob(filepath.Join(dir, "pcap", "h0-*.pcap"))
		if len(files) != 1 {
			t.Fatalf("%s: captures of h0: %v", c.name, files)
		}
		bytes := map[string]uint64{}
		if _, err := pcapflows.ReadFile(context.Background(), files[0], pcapflows.Options{Observe: func(pk *pcapflows.Packet) {
			if pk.Time >= from && pk.Time < to && pk.NewBytes > 0 {
				bytes[pk.Src.String()] += uint64(pk.NewBytes)
			}
		}}); err != nil {
			t.Fatal(err)
		}
		var rates []float64
		var total float64
		for _, b := range bytes {
			r := float64(b) * 8 / 4 / 1e6
			rates = append(rates, r)
			total += r
		}
		qs, err := series.ReadQueues(filepath.Join(dir, "queues.csv"), rj.ClockOffsetNs, rj.ZeroNs+rj.ClockOffsetNs)
		if err != nil {
			t.Fatal(err)
		}
		var qv []float64
		for _, s := range qs {
			if s.Port.Node != "s0" || s.Port.Iface != "h0" {
				continue
			}
			for _, pt := range s.Samples {
				if pt.T >= 1e9 && pt.T < 5e9 {
					qv = append(qv, pt.V)
				}
			}
		}
		if len(qv) == 0 {
			t.Fatalf("%s: no queue samples of s0/h0", c.name)
		}
		sort.Float64s(qv)
		med := qv[len(qv)/2]
		var gen, replaced, carried uint64
		for _, ps := range rj.Extensions.Switch.Ports {
			gen += ps.QCNFeedback
			replaced += ps.QCNReplaced
			carried += ps.QCNCarried
		}
		t.Logf("%s (%s, verdict %s): senders %.0f Mbit/s (%v), bottleneck queue median %.0f B (p10 %.0f, p90 %.0f); feedback %d generated, %d replaced, %d carried",
			c.name, c.law, rj.Fidelity.Verdict, total, rates, med, qv[len(qv)/10], qv[len(qv)*9/10], gen, replaced, carried)
		if len(rates) != 2 {
			t.Fatalf("%s: %d senders seen at the receiver", c.name, len(rates))
		}
		if total < 850 {
			errs = append(errs, fmt.Errorf("%s: together %.0f Mbit/s over a 1 Gbit/s bottleneck", c.name, total))
		}
		for _, r := range rates {
			if r < 0.1*total {
				errs = append(errs, fmt.Errorf("%s: a sender has %.0f of %.0f Mbit/s: starved", c.name, r, total))
			}
		}
		// Around Qeq: its upper decile reaches Qeq's order and stays well
		// below the 512 KB buffer (QCN-T leaves the queue empty half the
		// time in some runs: medians 0-50 KB, upper deciles 66-83 KB).
		if p90 := qv[len(qv)*9/10]; p90 < qeq/4 || p90 > 2*qeq {
			errs = append(errs, fmt.Errorf("%s: bottleneck queue p90 %.0f B outside [Qeq/4, 2 Qeq] = [%d, %d]", c.name, p90, qeq/4, 2*qeq))
		}
		if gen == 0 || carried+replaced+2 < gen {
			t.Errorf("%s: %d feedback generated, %d replaced, %d carried to the senders", c.name, gen, replaced, carried)
		}
	}
	return errors.Join(errs...)
}

// qcnStar writes the QCN paper's testbed as a topology file (as
// topologies/qcn-star-2.yaml: two senders into one 1 Gbit/s port with
// 512 KB of buffer, 100 us a link) and returns its path.
func qcnStar(t *testing.T) string {
	t.Helper()
	return topologyFile(t, `name: qcn-star
kind: star
star: {senders: 2}
links:
  host:     {rate: 1Gbit, buffer: 512KB, delay: 100us}
  receiver: {rate: 1Gbit, buffer: 512KB, delay: 100us}
`)
}

// topologyFile writes a topology file into a temporary directory and
// returns its path.
func topologyFile(t *testing.T, yml string) string {
	t.Helper()
	topo := filepath.Join(t.TempDir(), "topo.yaml")
	if err := os.WriteFile(topo, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	return topo
}
