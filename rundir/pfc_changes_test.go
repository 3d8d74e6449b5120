package rundir

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// pfc.csv round-trips through its writer and reader, lateness_ns is
// time - due, and a resume at stop has no crossing.
func TestPFCChangesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	in := []PFCChange{
		{TimeNs: 2_000_050, Node: "s0", Iface: "s1", Event: PFCPause, PeerNode: "s1", PeerIface: "s0", CrossingNs: 1_000_000, DueNs: 2_000_000, Hop: 1},
		{TimeNs: 9_000_000, Node: "s0", Iface: "s1", Event: PFCResume, PeerNode: "s1", PeerIface: "s0", CrossingNs: 8_000_010, DueNs: 9_000_010},
		{TimeNs: 12_000_000, Node: "h0", Iface: "eth0", Event: PFCResumeAtStop, PeerNode: "s0", PeerIface: "h0"},
	}
	if err := WritePFCChanges(filepath.Join(dir, PFCCSV), in); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, PFCCSV))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if want := "2000050,s0,s1,pause,s1,s0,1000000,2000000,50,1"; lines[1] != want {
		t.Errorf("row %q, want %q", lines[1], want)
	}
	if want := "9000000,s0,s1,resume,s1,s0,8000010,9000010,-10,0"; lines[2] != want {
		t.Errorf("row %q, want %q", lines[2], want)
	}
	if want := "12000000,h0,eth0,resume_at_stop,s0,h0,,,,0"; lines[3] != want {
		t.Errorf("row %q, want %q", lines[3], want)
	}
	out, err := ReadPFCChanges(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range out {
		out[i].Line = 0
	}
	if !reflect.DeepEqual(out, in) {
		t.Errorf("read back %+v\nwant %+v", out, in)
	}
	if c, err := ReadPFCChanges(t.TempDir()); c != nil || err != nil {
		t.Errorf("no pfc.csv: %v, %v; want nil, nil", c, err)
	}
}

// A malformed pfc.csv is an error at its line.
func TestPFCChangesBad(t *testing.T) {
	hdr := strings.Join(PFCChangesColumns, ",")
	row := "2000050,s0,s1,pause,s1,s0,1000000,2000000,50,1"
	for _, c := range []struct{ text, want string }{
		{"", "p.csv: empty"},
		{"time_ns,node\n", "p.csv: record on line 1"},
		{strings.Replace(hdr, "hop", "hops", 1) + "\n", `p.csv: header`},
		{hdr + "\n" + strings.Replace(row, "pause", "stop", 1) + "\n", `p.csv:2: event "stop"`},
		{hdr + "\n" + strings.Replace(row, "1000000", "soon", 1) + "\n", `p.csv:2: crossing_ns "soon" is not an integer`},
		{hdr + "\n" + strings.Replace(row, ",1000000,2000000,", ",,2000000,", 1) + "\n", `p.csv:2: crossing_ns "" is not an integer`},
		{hdr + "\n" + strings.Replace(row, ",s1,s0,", ",,s0,", 1) + "\n", "p.csv:2: a port is not named"},
		{hdr + "\n" + strings.Replace(row, "pause", "resume", 1) + "\n", "p.csv:2: hop 1 for a resume"},
		{hdr + "\n" + strings.Replace(row, ",1000000,2000000,", ",3000000,2000000,", 1) + "\n", "p.csv:2: due 2000000 before the crossing 3000000"},
		{hdr + "\n" + strings.Replace(row, "2000050,", "0,", 1) + "\n", "p.csv:2: time_ns 0"},
		{hdr + "\n" + strings.Replace(row, ",50,1", ",40,1", 1) + "\n", "p.csv:2: lateness_ns 40, but time - due is 50"},
		{hdr + "\n" + strings.Replace(row, ",50,1", ",50,0", 1) + "\n", "p.csv:2: a pause at hop 0"},
		{hdr + "\n" + row + ",x\n", "p.csv: record on line 2: wrong number of fields"},
	} {
		_, err := ParsePFCChanges("p.csv", []byte(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.text, err, c.want)
		}
	}
}
