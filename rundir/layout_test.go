package rundir

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// An experiment directory holds one run directory per variant; only
// those with run.json are runs, and captures are listed in name order.
func TestLayout(t *testing.T) {
	exp := t.TempDir()
	for _, v := range []string{"dctcp", "cubic", "interrupted"} {
		os.MkdirAll(filepath.Join(exp, v, PcapDir), 0o755)
	}
	for _, v := range []string{"dctcp", "cubic"} {
		os.WriteFile(filepath.Join(exp, v, RunJSON), []byte("{}"), 0o644)
	}
	vs, err := Variants(exp)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(exp, "cubic"), filepath.Join(exp, "dctcp")}; !reflect.DeepEqual(vs, want) {
		t.Fatalf("variants %v, want %v", vs, want)
	}
	if IsRun(exp) || !IsRun(filepath.Join(exp, "cubic")) || IsRun(filepath.Join(exp, "interrupted")) {
		t.Fatal("IsRun: want only the directories with run.json")
	}
	run := filepath.Join(exp, "cubic")
	for _, f := range []string{CaptureFile("h1", "eth0"), CaptureFile("h0", "eth0"), "pcap/s0.pcapng", "pcap/notes.txt"} {
		os.WriteFile(filepath.Join(run, f), nil, 0o644)
	}
	caps, err := Captures(run)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(run, "pcap/h0-eth0.pcap"), filepath.Join(run, "pcap/h1-eth0.pcap"), filepath.Join(run, "pcap/s0.pcapng")}
	if !reflect.DeepEqual(caps, want) {
		t.Fatalf("captures %v, want %v", caps, want)
	}
}
