package cc

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

// traceRec has the size and layout of struct cclab_trace_rec (48 bytes,
// kmod/bpf/cc_glue.h); the traffic tests check the decoded values.
func TestTraceRecordLayout(t *testing.T) {
	if got := binary.Size(traceRec{}); got != 48 {
		t.Fatalf("traceRec is %d bytes, want 48", got)
	}
	var r traceRec
	b := make([]byte, 48)
	b[44] = 5                                   // law
	binary.NativeEndian.PutUint32(b[40:], 0x21) // trace
	binary.NativeEndian.PutUint16(b[36:], 4242) // sport
	if _, err := binary.Decode(b, binary.NativeEndian, &r); err != nil {
		t.Fatal(err)
	}
	if r.Law != 5 || r.Trace != 0x21 || r.Sport != 4242 {
		t.Errorf("decoded %+v", r)
	}
}
