package cpucost

import (
	"compress/gzip"
	"math"
	"os"
	"strings"
	"testing"
)

// readFixture classifies testdata/websearch20.script.gz: the first 3000
// samples of a real `perf record -a -g` of
// experiments/capacity/websearch-load.yaml at 20 % load on this 2-core
// machine, as `perf script -F ScriptFields` printed them.
func readFixture(t *testing.T, each func(Sample)) {
	t.Helper()
	f, err := os.Open("testdata/websearch20.script.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := Parse(zr, each); err != nil {
		t.Fatal(err)
	}
}

// Every sample is read with its CPU and chain, and the samples whose
// stage a reader can tell from their chain get that stage.
func TestClassifyRealProfile(t *testing.T) {
	var all []Sample
	readFixture(t, func(s Sample) { all = append(all, s) })
	if len(all) != 3000 {
		t.Fatalf("%d samples, want 3000", len(all))
	}
	first := all[0]
	if first.Comm != "swapper" || first.CPU != 0 || first.Frames[0].Sym != "pv_native_safe_halt" {
		t.Fatalf("first sample %+v", first)
	}
	if st, _ := Classify(first); st != StageIdle {
		t.Fatalf("a halted CPU is %s", st)
	}
	seen := map[Stage]int{}
	for _, s := range all {
		st, soft := Classify(s)
		seen[st]++
		leaf := s.Frames[0].Sym
		has := func(sym string) bool {
			for _, f := range s.Frames {
				if f.Sym == sym {
					return true
				}
			}
			return false
		}
		switch {
		case strings.HasPrefix(leaf, "bpf_prog_") && strings.Contains(leaf, "_int_switch_"):
			if st != StageSwitchBPF {
				t.Errorf("a sample in %s is %s", leaf, st)
			}
		case leaf == "htb_dequeue" || leaf == "htb_enqueue":
			if st != StageQdisc || !soft && has("handle_softirqs") {
				t.Errorf("a sample in %s is %s (softirq %v)", leaf, st, soft)
			}
		case has("packet_rcv") && !has("tpacket_rcv") && !strings.HasPrefix(leaf, "bpf_prog_"):
			// The line's socket on its sink, woken for each packet.
			if st != StageLine {
				t.Errorf("a sample under packet_rcv (leaf %s) is %s", leaf, st)
			}
		case leaf == "handle_softirqs" && len(s.Frames) > 2 && s.Frames[2].Sym == "sysvec_call_function_single":
			if st != StageIRQ {
				t.Errorf("an IPI's entry is %s", st)
			}
		}
	}
	for _, st := range []Stage{StageIdle, StageQdisc, StageVeth, StageForward, StageSwitchBPF, StageTCP, StageLine, StageIRQ, StageQueueSmp} {
		if seen[st] == 0 {
			t.Errorf("no sample of %s in a loaded fabric's profile", st)
		}
	}
}

// The shares are of each CPU's time: busy stages from their samples, idle
// the rest, so each CPU's column sums to 1.
func TestBreakdownShares(t *testing.T) {
	a := NewAccumulator(2)
	readFixture(t, a.Add)
	b := a.Breakdown(2000, 0)
	sum := make([]float64, 2)
	for _, r := range b.Rows {
		for i, s := range r.Share {
			sum[i] += s
		}
	}
	for i, s := range sum {
		if math.Abs(s-1) > 1e-9 {
			t.Errorf("CPU %d's shares sum to %v", i, s)
		}
	}
	busy := b.BusyShare()
	if busy[0] < 0.2 || busy[0] > 0.8 {
		t.Errorf("CPU 0 busy %.2f in a run that kept it 30-50 %% busy", busy[0])
	}
	if b.PacketShare[0] <= 0 || b.PacketShare[0] > busy[0] {
		t.Errorf("packet share %.3f, busy %.3f", b.PacketShare[0], busy[0])
	}
	var sb strings.Builder
	if err := b.Write(&sb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), string(StageSwitchBPF)) || !strings.Contains(sb.String(), "3000 samples") {
		t.Errorf("table:\n%s", sb.String())
	}
}

// Text that is not perf script's is an error naming its line.
func TestParseRejectsMalformed(t *testing.T) {
	for _, in := range []string{
		"\tffffffff81000130 entry_SYSCALL_64 ([kernel.kallsyms])\n",
		"cclab 12 [x] 1.0:\n",
		"cclab 12 [0] later:\n",
		"justoneword\n",
	} {
		err := Parse(strings.NewReader("swapper 0 [000] 1.5: \n\tffffffff8 pv_native_safe_halt ([kernel.kallsyms])\n\n"+in), func(Sample) {})
		if err == nil || !strings.Contains(err.Error(), "line 4") {
			t.Errorf("%q: %v", in, err)
		}
	}
}

// A short chain (an interrupt's entry two frames deep) is classified, not
// read past its end.
func TestClassifyShortChain(t *testing.T) {
	s := Sample{Comm: "swapper", Frames: []Frame{{Sym: "handle_softirqs"}, {Sym: "sysvec_call_function_single"}}}
	if st, _ := Classify(s); st != StageIRQ {
		t.Errorf("short IPI chain is %s", st)
	}
}
