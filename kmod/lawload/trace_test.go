package lawload

import (
	"encoding/binary"
	"os"
	"regexp"
	"strconv"
	"testing"
)

// The flag names of the trace are those of kmod/law/law.h.
func TestTraceFlagsMatchLawH(t *testing.T) {
	src, err := os.ReadFile("../../kmod/law/law.h")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^#define LAW_TR_(\w+)\s+0x([0-9a-fA-F]+)`)
	want := map[string]uint32{}
	for _, m := range re.FindAllStringSubmatch(string(src), -1) {
		v, _ := strconv.ParseUint(m[2], 16, 32)
		want[m[1]] = uint32(v)
	}
	if len(want) == 0 {
		t.Fatal("no LAW_TR_ flags in law.h")
	}
	got := map[string]uint32{}
	for _, f := range traceFlags {
		got[f.name] = f.bit
	}
	for name, bit := range want {
		if got[name] != bit {
			t.Errorf("LAW_TR_%s = %#x in law.h, %#x here", name, bit, got[name])
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d flags here, %d in law.h", len(got), len(want))
	}
}

// traceRec has the size and layout of struct cclab_trace_rec (64 bytes,
// kmod/bpf/cc_glue.h, its g being struct glue_trace of kmod/law/glue.h;
// clang emits no BTF for it). TestLawsCarryTraffic checks the values
// decoded from real records.
func TestTraceRecordLayout(t *testing.T) {
	if got := binary.Size(traceRec{}); got != 64 {
		t.Fatalf("traceRec is %d bytes, want 64", got)
	}
	var r traceRec
	b := make([]byte, 64)
	binary.NativeEndian.PutUint64(b[8:], 123456789) // g.law_cwnd_bytes
	binary.NativeEndian.PutUint32(b[32:], 17)       // g.cwnd_segs
	binary.NativeEndian.PutUint32(b[36:], 0x21)     // g.trace
	binary.NativeEndian.PutUint32(b[40:], 950)      // g.rtt_us
	b[44], b[45] = 5, 3                             // g.law, g.nhops
	binary.NativeEndian.PutUint16(b[56:], 4242)     // sport
	binary.NativeEndian.PutUint32(b[60:], 1448)     // mss
	if _, err := binary.Decode(b, binary.NativeEndian, &r); err != nil {
		t.Fatal(err)
	}
	if r.LawCwndBytes != 123456789 || r.CwndSegs != 17 || r.Trace != 0x21 || r.RTTus != 950 ||
		r.Law != 5 || r.Nhops != 3 || r.Sport != 4242 || r.MSS != 1448 {
		t.Errorf("decoded %+v", r)
	}
}
