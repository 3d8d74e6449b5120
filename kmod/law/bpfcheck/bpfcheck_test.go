package bpfcheck

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"cclab/kmod/law"
)

// randomEvents is a wandering path: up to three hops whose queues and
// rates change, echoes that go missing, repeat or get stale, RTT and ECN
// samples, QCN feedback records (|Fb| 1..63, now and then several at
// once, on echoes with and without hops), gaps up to many QCN timer
// cycles and now and then megabytes acked; enough to drive every branch
// of every law.
func randomEvents(rng *rand.Rand, n int) []law.Event {
	var ev []law.Event
	var t uint64
	nh := 1 + rng.IntN(3)
	tx := make([]uint64, 3)
	q := make([]uint64, 3)
	rates := []uint32{1000, 10000, 100000}
	seq := uint32(0)
	for i := 0; i < n; i++ {
		dt := uint64(1000 + rng.IntN(20000))
		switch rng.IntN(40) {
		case 0:
			dt = uint64(rng.IntN(20)) * 7500000 // QCN's timer cycles
		case 1:
			dt = uint64(rng.IntN(100)) * 2400000 // QCN-T's
		}
		t += dt
		e := law.Event{Line: i + 1, TimeNs: t, Acked: uint32(rng.IntN(3) * 1448), RTTus: uint32(20 + rng.IntN(300))}
		if rng.IntN(30) == 0 {
			e.Acked = uint32(rng.IntN(4 << 20))
		}
		if rng.IntN(12) == 0 {
			e.QCNFb = uint8(1 + rng.IntN(law.QCNFbMax))
			if rng.IntN(5) == 0 {
				n := seq + uint32(rng.IntN(3)) // now and then several records
				e.QCNCount = &n
			}
		}
		if rng.IntN(3) == 0 {
			e.ECEBytes = e.Acked
		}
		// TCD's UE on every third ACK: from the line, not the generator,
		// so that the other events stay as they were.
		e.UE = i%3 == 1
		if rng.IntN(15) == 0 {
			nh = 1 + rng.IntN(3)
		}
		if rng.IntN(8) > 0 {
			if rng.IntN(6) > 0 {
				seq++
			}
			s := seq
			e.EchoSeq = &s
			if rng.IntN(20) == 0 {
				e.EchoAgeNs = min(t, 2000000)
			}
			for h := 0; h < nh; h++ {
				if rng.IntN(4) == 0 {
					q[h] = uint64(rng.IntN(200000))
				}
				tx[h] += uint64(rates[h]) * 125 * dt / 1000000 * uint64(rng.IntN(5)) / 4
				e.Hops = append(e.Hops, law.TraceHop{Qlen: q[h], TxBytes: tx[h], TsNs: t, RateMbps: rates[h]})
			}
		}
		ev = append(ev, e)
	}
	return ev
}

func readTrace(t *testing.T, name string) []law.Event {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ev, err := law.ReadTrace(f)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// TestBPFMatchesUserSpace loads every law into the kernel (the verifier
// must accept it) and replays traces through both builds: every step's
// window, segments, pacing, signal and trace flags must be identical.
func TestBPFMatchesUserSpace(t *testing.T) {
	progs, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { progs.Close() })

	type run struct {
		law    law.Law
		params []string
		events []law.Event
		random bool
	}
	var runs []run
	files := map[string][]string{
		"powertcp":       {"powertcp_unit_power.csv", "powertcp_queue.csv"},
		"theta_powertcp": {"theta_rtt.csv", "theta_floor.csv"},
		"hpcc":           {"hpcc_2hop.csv"},
		"swift":          {"swift_delay.csv"},
		"dctcp":          {"dctcp_marks.csv"},
		"qcn":            {"qcn_feedback.csv"},
		"qcn_t":          {"qcn_feedback.csv"},
	}
	for name, traces := range files {
		l, err := law.ParseLaw(name)
		if err != nil {
			t.Fatalf("files: %v", err)
		}
		for _, n := range traces {
			runs = append(runs, run{l, nil, readTrace(t, n), false})
		}
	}
	rng := rand.New(rand.NewPCG(3, 5))
	variants := map[string][][]string{
		"powertcp":       {nil, {"max_cwnd_bytes=100000", "gamma_ppm=500000"}},
		"theta_powertcp": {nil, {"base_rtt_ns=300000", "host_bw_mbps=100", "max_cwnd_bytes=0"}},
		"hpcc":           {nil, {"vai_enable=1", "vai_sf_acks=30"}, {"max_stage=0", "vai_enable=1"}},
		"swift":          {nil, {"vai_enable=1", "vai_sf_acks=30"}, {"min_cwnd_bytes=100", "ai_bytes=100"}},
		"dctcp":          {nil, {"g_shift=0"}},
		"timely": {nil, {"min_rtt_ns=100000", "t_low_ns=150000", "t_high_ns=250000", "hai_n=2"},
			{"seg_bytes=0"}, {"seg_bytes=3000", "t_low_ns=150000", "t_high_ns=250000", "hai_n=2"},
			{"tcd=1", "beta_ppm=1600000", "t_low_ns=100000", "t_high_ns=250000"}},
		"dcqcn": {nil, {"byte_counter_bytes=5000", "fast_recovery=1", "alpha_ns=1000", "cnp_ns=0"},
			{"byte_counter_bytes=0", "timer_ns=300000", "g_shift=0"}, {"tcd=1"}, {"tcd=1", "cnp_ns=0"}},
		"qcn": {nil, {"byte_counter_bytes=5000", "fast_recovery=1", "timer_ns=100000", "gd_shift=6"},
			{"byte_counter_bytes=0", "timer_ns=300000", "fast_recovery=0", "rai_kbps=50000", "min_rate_kbps=300000"}},
		"qcn_t": {nil, {"timer_ns=50000", "hai_cycles=8", "fast_recovery=2"},
			{"timer_ns=1000", "fast_recovery=100", "rhai_kbps=1", "gd_shift=16"}},
	}
	// Every law of the table is checked: one without variants here is an
	// error, not a law left out.
	for _, l := range law.All() {
		vs, ok := variants[l.String()]
		if !ok {
			t.Errorf("law %s has no parameter variants in bpfcheck_test.go (variants): add its row, nil for the defaults", l)
			vs = [][]string{nil}
		}
		for _, v := range vs {
			runs = append(runs, run{l, v, randomEvents(rng, 400), true})
		}
	}
	for name := range variants {
		if _, err := law.ParseLaw(name); err != nil {
			t.Errorf("variants: %v", err)
		}
	}
	for _, r := range runs {
		p, err := law.DefaultParams(r.law)
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range r.params {
			if err := p.SetAssignment(kv); err != nil {
				t.Fatal(err)
			}
		}
		user, err := law.Replay(context.Background(), p, r.events, 0)
		if err != nil {
			t.Fatal(err)
		}
		st, err := progs.Stepper(p)
		if err != nil {
			t.Fatal(err)
		}
		kern, err := law.ReplayWith(context.Background(), st, p, r.events, 0)
		if err != nil {
			t.Fatal(err)
		}
		var cuts, rises int
		for i := range user.Steps {
			if user.Steps[i] != kern.Steps[i] {
				t.Fatalf("%s %v step %d: user space %+v, BPF %+v", r.law, r.params, i, user.Steps[i], kern.Steps[i])
			}
			if user.Steps[i].Trace.Has(law.TrECE | law.TrDecrease) {
				cuts++
			}
			if user.Steps[i].Trace.Has(law.TrIncrease) {
				rises++
			}
		}
		// the QCN laws' random replays take feedback and climb back: both
		// paths compared
		if r.law.UsesQCN() && r.random && (cuts < 10 || rises < 10) {
			t.Errorf("%s %v: %d feedback cuts and %d increases: the events do not exercise it", r.law, r.params, cuts, rises)
		}
	}
	t.Logf("%d replays identical in BPF and user space", len(runs))
}
