package capture

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"golang.org/x/net/bpf"
)

// skb is what the filter reads of a packet: the frame and three of the
// kernel's fields.
type skb struct {
	pktType, mark, proto uint32
	frame                []byte
}

// run interprets the filter's instructions on p as the kernel would
// (x/net/bpf's VM has no ancillary loads); it returns the bytes kept.
func run(t *testing.T, prog []bpf.Instruction, p skb) uint32 {
	t.Helper()
	var a uint32
	for pc := 0; pc < len(prog); pc++ {
		switch in := prog[pc].(type) {
		case bpf.LoadExtension:
			a = map[bpf.Extension]uint32{bpf.ExtType: p.pktType, bpf.ExtMark: p.mark, bpf.ExtProto: p.proto}[in.Num]
		case bpf.LoadAbsolute:
			if int(in.Off)+in.Size > len(p.frame) {
				return 0 // the kernel's verdict for a load past the end
			}
			b := p.frame[in.Off : int(in.Off)+in.Size]
			switch in.Size {
			case 1:
				a = uint32(b[0])
			case 4:
				a = binary.BigEndian.Uint32(b)
			default:
				t.Fatalf("load of %d bytes", in.Size)
			}
		case bpf.ALUOpConstant:
			if in.Op != bpf.ALUOpAnd {
				t.Fatalf("ALU op %v", in.Op)
			}
			a &= in.Val
		case bpf.JumpIf:
			if in.Cond != bpf.JumpEqual {
				t.Fatalf("jump condition %v", in.Cond)
			}
			if a == in.Val {
				pc += int(in.SkipTrue)
			} else {
				pc += int(in.SkipFalse)
			}
		case bpf.Jump:
			pc += int(in.Skip)
		case bpf.RetConstant:
			return in.Val
		default:
			t.Fatalf("instruction %T", in)
		}
	}
	t.Fatal("the program ran off its end")
	return 0
}

// ipv4 is a minimal Ethernet + IPv4 frame from src.
func ipv4(src netip.Addr, version byte) []byte {
	f := make([]byte, 14+20+20)
	binary.BigEndian.PutUint16(f[12:], ethTypeIPv4)
	f[14] = version<<4 | 5
	s := src.As4()
	copy(f[26:30], s[:])
	return f
}

// The filter drops exactly the unmarked IPv4 arrivals from delayed
// sources: for sources in every jump chunk (450 of them: three chunks),
// and keeps the marked second sighting, what the host sends, other
// sources, other protocols and other IP versions. Without a redelivery
// it keeps everything; the program assembles.
func TestFilterRedelivery(t *testing.T) {
	const snaplen, mark = 128, 0xcc1ade1a
	var srcs []netip.Addr
	for i := range 450 {
		srcs = append(srcs, netip.AddrFrom4([4]byte{198, 18, byte(i >> 8), byte(i)}))
	}
	re := &Redelivery{Mark: mark, Sources: srcs}
	prog, err := filterInstructions(snaplen, re)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bpf.Assemble(prog); err != nil {
		t.Fatal(err)
	}
	stranger := netip.MustParseAddr("10.0.0.7")
	for _, c := range []struct {
		name string
		p    skb
		want uint32
	}{
		{"first source, unmarked", skb{0, 0, ethTypeIPv4, ipv4(srcs[0], 4)}, 0},
		{"a source in the second chunk", skb{0, 0, ethTypeIPv4, ipv4(srcs[250], 4)}, 0},
		{"the last source", skb{0, 0, ethTypeIPv4, ipv4(srcs[449], 4)}, 0},
		{"the chunk boundary", skb{0, 0, ethTypeIPv4, ipv4(srcs[200], 4)}, 0},
		{"marked: after the delay", skb{0, mark, ethTypeIPv4, ipv4(srcs[250], 4)}, snaplen},
		{"another mark", skb{0, 1, ethTypeIPv4, ipv4(srcs[250], 4)}, 0},
		{"outgoing", skb{packetOutgoing, 0, ethTypeIPv4, ipv4(srcs[3], 4)}, snaplen},
		{"not a delayed source", skb{0, 0, ethTypeIPv4, ipv4(stranger, 4)}, snaplen},
		{"ARP", skb{0, 0, 0x0806, ipv4(srcs[3], 4)}, snaplen},
		{"not version 4", skb{0, 0, ethTypeIPv4, ipv4(srcs[3], 6)}, snaplen},
	} {
		if got := run(t, prog, c.p); got != c.want {
			t.Errorf("%s: keeps %d bytes, want %d", c.name, got, c.want)
		}
	}
	for i, s := range srcs {
		if run(t, prog, skb{0, 0, ethTypeIPv4, ipv4(s, 4)}) != 0 {
			t.Errorf("source %d (%v) kept", i, s)
		}
	}
	plain, err := filterInstructions(snaplen, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := run(t, plain, skb{0, 0, ethTypeIPv4, ipv4(srcs[0], 4)}); got != snaplen || len(plain) != 1 {
		t.Errorf("no redelivery: keeps %d bytes with %d instructions, want %d with 1", got, len(plain), snaplen)
	}
	if _, err := filterInstructions(snaplen, &Redelivery{Mark: mark, Sources: []netip.Addr{netip.MustParseAddr("::1")}}); err == nil {
		t.Error("an IPv6 source was accepted")
	}
}
