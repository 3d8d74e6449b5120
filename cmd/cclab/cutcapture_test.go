package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"

	"cclab/rundir"
)

// cutSummary is what `analyze --json` says of one capture and its flows.
type cutSummary struct {
	Captures []struct {
		File    string `json:"file"`
		Packets uint64 `json:"packets"`
		Cut     *struct {
			Offset  int64  `json:"offset"`
			Exact   bool   `json:"exact"`
			Packets uint64 `json:"packets"`
			Reason  string `json:"reason"`
		} `json:"cut"`
	} `json:"captures"`
	Flows []struct {
		Client   string `json:"client"`
		Complete bool   `json:"complete"`
		FCT      int64  `json:"fct_ns"`
	} `json:"flows"`
}

// analyzeCapture analyses one capture file with the run's topology.
func analyzeCapture(t *testing.T, runDir, file string) cutSummary {
	t.Helper()
	out, err := run(t, "analyze", "--pcap", file, "--topology", filepath.Join(runDir, rundir.RunJSON), "--json", "--quiet", "--out", t.TempDir())
	if err != nil {
		t.Fatalf("analyze %s: %v", filepath.Base(file), err)
	}
	var s cutSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil || len(s.Captures) != 1 {
		t.Fatalf("analyze --json: %v\n%.500s", err, out)
	}
	return s
}

// pcapRecords are the byte offsets of a pcap file's records.
func pcapRecords(b []byte) []int64 {
	var offs []int64
	for off := int64(24); off+16 <= int64(len(b)); off += 16 + int64(binary.LittleEndian.Uint32(b[off+8:])) {
		offs = append(offs, off)
	}
	return offs
}

// A real run's capture, cut mid-record at several places or damaged in
// the middle (pcap and pcapng), is analysed up to the damage: the cut is
// named by its byte offset and the packets before it, and every flow
// complete in what was read is the flow of the whole capture, with the
// same FCT.
func TestCutCaptureIsAnalysedToTheDamage(t *testing.T) {
	runDir := finishedRun(t)
	whole, err := os.ReadFile(filepath.Join(runDir, rundir.PcapDir, "h0-eth0.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	recs := pcapRecords(whole)
	n := len(recs)
	if n < 30 {
		t.Fatalf("the run's capture holds %d records: too few to cut", n)
	}
	full := analyzeCapture(t, runDir, filepath.Join(runDir, rundir.PcapDir, "h0-eth0.pcap"))
	fct := map[string]int64{}
	for _, f := range full.Flows {
		if f.Complete {
			fct[f.Client] = f.FCT
		}
	}
	if full.Captures[0].Cut != nil || len(fct) != 6 {
		t.Fatalf("the whole capture: cut %+v, %d complete flows of 6", full.Captures[0].Cut, len(fct))
	}

	// The pcapng copy: the same packets, one enhanced packet block each.
	var ng bytes.Buffer
	r, err := pcapgo.NewReader(bytes.NewReader(whole))
	if err != nil {
		t.Fatal(err)
	}
	w, err := pcapgo.NewNgWriter(&ng, r.LinkType())
	if err != nil {
		t.Fatal(err)
	}
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		if err := w.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	var blocks []int64
	for off := int64(0); off+8 <= int64(ng.Len()); off += int64(binary.LittleEndian.Uint32(ng.Bytes()[off+4:])) {
		if binary.LittleEndian.Uint32(ng.Bytes()[off:]) == 6 {
			blocks = append(blocks, off)
		}
	}
	if len(blocks) != n {
		t.Fatalf("pcapng copy: %d packet blocks for %d records", len(blocks), n)
	}

	corrupt := func(b []byte, at int64, v uint32) []byte {
		b = bytes.Clone(b)
		binary.LittleEndian.PutUint32(b[at:], v)
		return b
	}
	cases := []struct {
		name string
		file []byte
		ext  string
		k    int   // packets before the damage
		at   int64 // where the damage starts
	}{
		{"cut in a record header", whole[:recs[n/3]+7], "pcap", n / 3, recs[n/3]},
		{"cut in a record's data", whole[:recs[n/2]+16+3], "pcap", n / 2, recs[n/2]},
		{"cut in the last record", whole[:len(whole)-5], "pcap", n - 1, recs[n-1]},
		{"record length impossible", corrupt(whole, recs[2*n/3]+8, 1<<30), "pcap", 2 * n / 3, recs[2*n/3]},
		{"pcapng block length impossible", corrupt(ng.Bytes(), blocks[n/2]+4, 7), "pcapng", n / 2, blocks[n/2]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "h0-eth0."+c.ext)
			if err := os.WriteFile(file, c.file, 0o644); err != nil {
				t.Fatal(err)
			}
			s := analyzeCapture(t, runDir, file)
			cp := s.Captures[0]
			if cp.Cut == nil || cp.Cut.Offset != c.at || !cp.Cut.Exact || cp.Cut.Packets != uint64(c.k) || cp.Packets != uint64(c.k) {
				t.Fatalf("%d packets, cut %+v; want %d packets and a cut at byte %d", cp.Packets, cp.Cut, c.k, c.at)
			}
			complete := 0
			for _, f := range s.Flows {
				if !f.Complete {
					continue
				}
				complete++
				if want, ok := fct[f.Client]; !ok || want != f.FCT {
					t.Errorf("flow %s: FCT %d before the damage, %d in the whole capture", f.Client, f.FCT, want)
				}
			}
			if c.k >= n/2 && complete == 0 {
				t.Errorf("no flow complete in %d of %d packets", c.k, n)
			}
		})
	}
	// The summary on screen names the file, the offset and the packets read.
	file := filepath.Join(t.TempDir(), "h0-eth0.pcap")
	os.WriteFile(file, cases[1].file, 0o644)
	out, err := run(t, "analyze", "--pcap", file, "--topology", filepath.Join(runDir, rundir.RunJSON), "--quiet", "--out", t.TempDir())
	want := fmt.Sprintf("warning: capture h0-eth0.pcap cut at byte offset %d (truncated record: unexpected EOF): %d packets read before it", recs[n/2], n/2)
	if err != nil || !strings.HasPrefix(out, want) {
		t.Fatalf("summary: %v\n%s\nwant it to open with %q", err, out, want)
	}
}
