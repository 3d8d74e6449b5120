package capture

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cclab/internal/testnet"
	"cclab/orchestrator/flows"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Capture both ends of a veth while flows run; the files decode with
// gopacket, hold exactly the flows' SYNs, no drops, and tshark reads them
// without a warning.
func TestCaptureFlows(t *testing.T) {
	ea, eb := testnet.Pair(t)
	a, b := flows.Host{Netns: ea.Netns, Addr: ea.Addr}, flows.Host{Netns: eb.Netns, Addr: eb.Addr}
	dir := t.TempDir()
	ifaceA, ifaceB := ea.Iface, eb.Iface
	ports := []Port{{Host: "a", Netns: a.Netns, Iface: ifaceA}, {Host: "b", Netns: b.Netns, Iface: ifaceB}}
	s, err := Start(dir, ports, 128)
	if err != nil {
		t.Fatal(err)
	}
	var specs []flows.Spec
	for i := range 20 {
		specs = append(specs, flows.Spec{ID: i, Src: "a", Dst: "b", Size: 500_000, Start: time.Duration(i) * time.Millisecond})
	}
	res, err := flows.Run(context.Background(), specs, flows.Options{Hosts: map[string]flows.Host{"a": a, "b": b}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the last ACKs and FINs
	stats, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	srcPorts := map[uint16]bool{}
	for _, r := range res {
		if !r.OK() {
			t.Fatalf("flow %d: %s", r.ID, r.Status)
		}
		srcPorts[r.SrcPort] = true
	}
	for _, st := range stats {
		if st.Drops != 0 || st.Packets == 0 {
			t.Fatalf("%s: %d packets, %d drops", st.File, st.Packets, st.Drops)
		}
		path := filepath.Join(dir, st.File)
		syns, payload, n := decode(t, path)
		if uint64(n) != st.Packets {
			t.Fatalf("%s: decoded %d packets, stats say %d", path, n, st.Packets)
		}
		if len(syns) != 20 {
			t.Fatalf("%s: %d SYNs, want 20", path, len(syns))
		}
		for p := range syns {
			if !srcPorts[p] {
				t.Fatalf("%s: SYN from port %d that no flow used", path, p)
			}
		}
		if payload < 20*500_000 {
			t.Fatalf("%s: %d payload bytes on the wire, want >= %d", path, payload, 20*500_000)
		}
		tshark(t, path)
		t.Logf("%s: %d packets, %d payload bytes", st.File, st.Packets, payload)
	}
}

// decode reads a pcap with gopacket: SYN source ports, payload bytes a->b.
func decode(t *testing.T, path string) (map[uint16]bool, int, int) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if r.Snaplen() != 128 || r.LinkType() != layers.LinkTypeEthernet {
		t.Fatalf("%s: snaplen %d link %v", path, r.Snaplen(), r.LinkType())
	}
	syns := map[uint16]bool{}
	payload, n := 0, 0
	for {
		data, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		if ci.CaptureLength > 128 || ci.Length < ci.CaptureLength {
			t.Fatalf("%s: packet %d caplen %d len %d", path, n, ci.CaptureLength, ci.Length)
		}
		pkt := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.Default)
		ip, _ := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		tcp, _ := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if ip == nil || tcp == nil {
			continue // ARP and such
		}
		if tcp.SYN && !tcp.ACK {
			syns[uint16(tcp.SrcPort)] = true
		}
		if tcp.DstPort == 5201 {
			payload += int(ip.Length) - int(ip.IHL)*4 - int(tcp.DataOffset)*4
		}
	}
	return syns, payload, n
}

func tshark(t *testing.T, path string) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Fatal("tshark is not installed (scripts/bootstrap installs it)")
	}
	out, err := exec.Command("tshark", "-r", path).CombinedOutput()
	if err != nil {
		t.Fatalf("tshark -r %s: %v\n%s", path, err, out)
	}
	low := strings.ToLower(string(out))
	for _, bad := range []string{"malformed", "warn", "error"} {
		if strings.Contains(low, bad) {
			i := strings.Index(low, bad)
			t.Fatalf("tshark -r %s says %q: ...%s...", path, bad, out[max(0, i-200):min(len(out), i+200)])
		}
	}
}
