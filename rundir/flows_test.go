package rundir

import (
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// What WriteFlows writes, ReadFlows reads back: addresses, ports, the
// empty end and FCT of a failed flow, and each row's line.
func TestFlowsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	in := []Flow{
		{ID: "0", Src: "h1", Dst: "h0", SrcAddr: netip.MustParseAddrPort("10.0.0.2:40000"), DstAddr: netip.MustParseAddrPort("10.0.0.1:5201"),
			Size: 1 << 20, CC: "dctcp", StartNs: 1000, EndNs: 9000, IdealFCTNs: 4000, Status: "ok", Group: "incast"},
		{ID: "1", Src: "h2", Dst: "h0", SrcAddr: netip.AddrPortFrom(netip.MustParseAddr("10.0.0.3"), 0), DstAddr: netip.AddrPortFrom(netip.MustParseAddr("10.0.0.1"), 0),
			Size: 10, CC: "cubic", StartNs: 2000, EndNs: 5000, FCTNs: 3000, IdealFCTNs: 100, Status: "failed: refused", Group: "incast"},
		{ID: "2", Src: "h3", Dst: "h0", Status: "failed: never started"},
	}
	if err := WriteFlows(filepath.Join(dir, FlowsCSV), in); err != nil {
		t.Fatal(err)
	}
	out, err := ReadFlows(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]Flow(nil), in...)
	want[0].FCTNs = 8000                // end - start, written for a completed flow
	want[1].EndNs, want[1].FCTNs = 0, 0 // not written for a flow that did not finish
	for i := range want {
		want[i].Line = i + 2
	}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("read back\n%+v\nwant\n%+v", out, want)
	}
}

func TestReadFlowsMissingAndEmpty(t *testing.T) {
	dir := t.TempDir()
	if f, err := ReadFlows(dir); f != nil || err != nil {
		t.Fatalf("no flows.csv: %v, %v; want nil, nil", f, err)
	}
	os.WriteFile(filepath.Join(dir, FlowsCSV), []byte(strings.Join(FlowsColumns, ",")+"\n"), 0o644)
	if f, err := ReadFlows(dir); f == nil || len(f) != 0 || err != nil {
		t.Fatalf("header only: %v, %v; want an empty table", f, err)
	}
}

// Malformed rows are errors that name the file, the line and the field.
func TestParseFlowsErrors(t *testing.T) {
	hdr := strings.Join(FlowsColumns, ",")
	row := "0,h1,h0,10.0.0.2,40000,10.0.0.1,5201,100,cubic,1,2,1,1,ok,g"
	for _, c := range []struct{ text, want string }{
		{"", "empty, want header flow_id"},
		{"flow_id,src\n", `header has no column "dst"`},
		{hdr + "\n" + row + ",extra\n", "f.csv:2: 16 fields, want 15"},
		{hdr + "\n" + strings.Replace(row, ",100,", ",lots,", 1) + "\n", `f.csv:2: size_bytes "lots" is not an integer`},
		{hdr + "\n" + row + "\n" + strings.Replace(row, ",100,", ",-5,", 1) + "\n", "f.csv:3: negative size"},
		{hdr + "\n" + strings.Replace(row, ",40000,", ",70000,", 1) + "\n", "f.csv:2: src_port 70000 out of range"},
		{hdr + "\n" + strings.Replace(row, ",5201,", ",-1,", 1) + "\n", "f.csv:2: dst_port -1 out of range"},
	} {
		_, err := ParseFlows("f.csv", []byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.text, err, c.want)
		}
	}
}
