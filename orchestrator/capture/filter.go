package capture

import (
	"fmt"
	"net/netip"

	"golang.org/x/net/bpf"
)

// Redelivery describes a port where a link's delay is served (link
// placement, orchestrator/delay): a packet from one of Sources reaches the
// port's packet tap twice, once as it comes off the wire, unmarked, and
// again with skb mark Mark when the line gives it back after the link's
// delay. Only the second is its arrival; the capture keeps only that one.
type Redelivery struct {
	Mark    uint32
	Sources []netip.Addr
}

// Offsets in an Ethernet frame, and the kernel's value for a packet the
// host sends (skb->pkt_type PACKET_OUTGOING).
const (
	ethTypeIPv4       = 0x0800
	ipv4VersionOffset = 14
	ipv4SrcOffset     = 14 + 12
	packetOutgoing    = 4
	// sourcesPerJump: a conditional jump skips at most 255 instructions.
	sourcesPerJump = 200
)

// filterProgram is the capture's socket filter, assembled.
func filterProgram(snaplen int, re *Redelivery) ([]bpf.RawInstruction, error) {
	prog, err := filterInstructions(snaplen, re)
	if err != nil {
		return nil, err
	}
	return bpf.Assemble(prog)
}

// filterInstructions keep snaplen bytes of every packet, except (with re)
// the unmarked first sighting of a packet that is still to serve its
// link's delay: one delay_take sends to the line (an IPv4 header, version
// 4, from a delayed source; the take also wants the headers linear, which
// veth's and the line's packets are).
func filterInstructions(snaplen int, re *Redelivery) ([]bpf.Instruction, error) {
	keep := bpf.RetConstant{Val: uint32(snaplen)}
	prog := []bpf.Instruction{}
	if re != nil && len(re.Sources) > 0 {
		prog = append(prog,
			bpf.LoadExtension{Num: bpf.ExtType},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: packetOutgoing, SkipTrue: 4},
			bpf.LoadExtension{Num: bpf.ExtMark},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: re.Mark, SkipTrue: 2},
			bpf.LoadExtension{Num: bpf.ExtProto},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: ethTypeIPv4, SkipTrue: 1},
			keep,
			bpf.LoadAbsolute{Off: ipv4VersionOffset, Size: 1},
			bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: 0xf0},
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0x40, SkipTrue: 1},
			keep,
			bpf.LoadAbsolute{Off: ipv4SrcOffset, Size: 4},
		)
		for i := 0; i < len(re.Sources); i += sourcesPerJump {
			chunk := re.Sources[i:min(i+sourcesPerJump, len(re.Sources))]
			for j, src := range chunk {
				if !src.Is4() {
					return nil, fmt.Errorf("capture filter: delayed source %v is not IPv4", src)
				}
				b := src.As4()
				v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
				// To the chunk's drop: past the other compares and the
				// jump over it.
				prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: v, SkipTrue: uint8(len(chunk) - j)})
			}
			prog = append(prog, bpf.Jump{Skip: 1}, bpf.RetConstant{Val: 0})
		}
	}
	return append(prog, keep), nil
}
