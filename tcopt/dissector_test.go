package tcopt

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

func tshark(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("tshark", args...).Output()
	if err != nil {
		t.Fatalf("tshark %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// TestPlainTshark: without our dissector, Wireshark shows the option as an
// RFC 6994 experimental option with our ExID, and nothing as malformed.
func TestPlainTshark(t *testing.T) {
	ss := samples()
	pcap := writePcap(t, ss)
	out := tshark(t, "-r", pcap, "-V")
	ours := 0
	for _, s := range ss {
		if !s.foreign {
			ours++
		}
	}
	if n := strings.Count(out, "Experiment Identifier: Unknown (0xcc1a)"); n != ours {
		t.Errorf("%d options shown with ExID 0xcc1a, want %d", n, ours)
	}
	// Wireshark's one remark is a heuristic about NOP padding (the kernel
	// pads with NOPs too); anything else is a finding.
	out = strings.ReplaceAll(out, "Expert Info (Warning/Protocol): 4 NOP in a row", "")
	for _, bad := range []string{"Malformed", "Expert Info (Error", "Expert Info (Warn", "[TCP Previous segment"} {
		if strings.Contains(out, bad) {
			i := strings.Index(out, bad)
			t.Errorf("tshark reports %q: ...%s...", bad, out[max(0, i-200):min(len(out), i+200)])
		}
	}
}

// TestLuaDissector: with tcopt/cclab_int.lua, tshark decodes the header
// flags and every hop's fields exactly as the Go codec does, and leaves
// other experiments' options to Wireshark.
func TestLuaDissector(t *testing.T) {
	ss := samples()
	pcap := writePcap(t, ss)
	fields := []string{"cclab_int.version", "cclab_int.ue", "cclab_int.echo", "cclab_int.overflow", "cclab_int.hops", "cclab_int.slots",
		"cclab_int.rate", "cclab_int.qlen", "cclab_int.tx_bytes", "cclab_int.ts", "cclab_int.valid",
		"tcp.options.experimental.exid"}
	args := []string{"-X", "lua_script:cclab_int.lua", "-r", pcap, "-T", "fields", "-E", "occurrence=a"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	lines := strings.Split(strings.TrimRight(tshark(t, args...), "\n"), "\n")
	if len(lines) != len(ss) {
		t.Fatalf("%d lines for %d packets", len(lines), len(ss))
	}
	b := map[bool]string{true: "1", false: "0"}
	for i, s := range ss {
		var want string
		if s.foreign {
			want = strings.Repeat("\t", len(fields)-1) + "0xcc1b"
		} else {
			var rate, qlen, tx, ts, valid []string
			for _, r := range s.opt.Records {
				h, ok := r.Hop()
				rate = append(rate, fmt.Sprint(h.RateMbps))
				// An invalid record is still shown, in its raw units.
				if !ok {
					h = Hop{Qlen: uint32(r.Qlen) * QlenUnit, TxBytes: r.Tx * TxUnit, TS: r.TS * TSUnit}
				}
				qlen = append(qlen, fmt.Sprint(h.Qlen))
				tx = append(tx, fmt.Sprint(h.TxBytes))
				ts = append(ts, fmt.Sprint(h.TS))
				valid = append(valid, b[ok])
			}
			j := func(x []string) string { return strings.Join(x, ",") }
			ue := "" // v0 has no U field
			if s.opt.Version == V1 {
				ue = b[s.opt.Undetermined]
			}
			want = strings.Join([]string{fmt.Sprint(s.opt.Version), ue, b[s.opt.Echo], b[s.opt.Overflow], fmt.Sprint(len(s.opt.Records)),
				fmt.Sprint(s.opt.Slots), j(rate), j(qlen), j(tx), j(ts), j(valid), ""}, "\t")
		}
		if lines[i] != want {
			t.Errorf("packet %d (%+v):\n got %q\nwant %q", i+1, s, lines[i], want)
		}
	}
	// The verbose tree names each hop's fields.
	out := tshark(t, "-X", "lua_script:cclab_int.lua", "-r", pcap, "-V")
	for _, w := range []string{"cclab INT telemetry: forward, 5 of 5 hops, overflow", "cclab INT telemetry: echo, 3 of 3 hops",
		"Hop 4: 1000 Mbit/s", "Queue length (bytes): ", "txBytes (bytes, mod 32 MiB): ", "Timestamp (ns, mod 67.1 ms): ",
		"bad rate code 25", "Overflow: True", "Echo: True",
		"cclab INT telemetry: forward, 4 of 5 hops, undetermined", "cclab INT telemetry: echo, 3 of 3 hops, undetermined",
		"Undetermined (U): True", "Undetermined (U): False", "Version: 1"} {
		if !strings.Contains(out, w) {
			t.Errorf("tshark -V with the dissector lacks %q", w)
		}
	}
	if strings.Contains(out, "Malformed") || strings.Contains(out, "Lua Error") {
		t.Errorf("tshark -V with the dissector reports an error")
	}
}
