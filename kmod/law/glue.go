package law

/*
#include "userspace.h"
*/
import "C"

// The glue policy (glue.h) both builds wrap a law in, for its tests.

// Kernel ca_state values the policy tells apart (enum tcp_ca_state).
const (
	CAOpen     = 0
	CARecovery = C.GLUE_CA_RECOVERY
	CALoss     = C.GLUE_CA_LOSS
	// CwndMin is the window floor in segments.
	CwndMin = C.GLUE_CWND_MIN
)

// LossEnvelope is one socket's struct glue_loss.
type LossEnvelope struct{ c C.struct_glue_loss }

// Start is glue_loss_start: the kernel enters newState from curState with
// the socket's snd_cwnd and snd_ssthresh.
func (g *LossEnvelope) Start(curState, newState uint8, sndCwnd, sndSsthresh uint32) {
	C.glue_loss_start(&g.c, C.__u8(curState), C.__u8(newState), C.__u32(sndCwnd), C.__u32(sndSsthresh))
}

// Apply is glue_loss_envelope then glue_clamp_cwnd: the window the socket
// gets for the law's lawSegs after an ACK of ackedSegs in caState.
func (g *LossEnvelope) Apply(lawSegs uint64, ackedSegs uint32, caState uint8, clamp uint32) uint32 {
	segs := C.glue_loss_envelope(&g.c, C.__u64(lawSegs), C.__u32(ackedSegs), C.__u8(caState))
	return uint32(C.glue_clamp_cwnd(segs, C.__u32(clamp)))
}

// Undo is glue_loss_undo.
func (g *LossEnvelope) Undo() { C.glue_loss_undo(&g.c) }

// Active reports whether an envelope is in force, and its cap.
func (g *LossEnvelope) Active() (bool, uint32) { return g.c.cap != 0, uint32(g.c.cap) }

// Ssthresh is glue_ssthresh.
func Ssthresh(sndCwnd uint32) uint32 { return uint32(C.glue_ssthresh(C.__u32(sndCwnd))) }

// UnpacedRate is glue_unpaced_rate: the kernel's pacing-rate estimate of
// an unpaced socket, bytes/s (srtt8 is tcp_sock.srtt_us, microseconds << 3).
func UnpacedRate(mss, sndCwnd, packetsOut, sndSsthresh, srtt8 uint32) uint64 {
	return uint64(C.glue_unpaced_rate(C.__u32(mss), C.__u32(sndCwnd), C.__u32(packetsOut), C.__u32(sndSsthresh), C.__u32(srtt8)))
}

// SocketACK is what both builds read from the socket for one ACK, the
// input of glue_ack_input.
type SocketACK struct {
	NowNs       uint64
	AckedBytes  uint64 // newly acknowledged, as the socket counts (may exceed 32 bits)
	SndUna      uint32
	SndNxt      uint32
	CwndSegs    uint32
	MSS         uint32
	RTTus       int64 // rs->rtt_us: negative = no sample
	CwndLimited bool
}

// AckInput is glue_ack_input: the law's input for one ACK, and the
// sender's ECE flag after it (ece: set by in_ack_event for this ACK).
func AckInput(s SocketACK, ece bool) (Ack, bool) {
	var ca C.struct_law_ack
	e := C.__u8(0)
	if ece {
		e = 1
	}
	cl := C.int(0)
	if s.CwndLimited {
		cl = 1
	}
	C.glue_ack_input(&ca, C.__u64(s.NowNs), C.__u64(s.AckedBytes), C.__u32(s.SndUna), C.__u32(s.SndNxt),
		C.__u32(s.CwndSegs), C.__u32(s.MSS), C.__s64(s.RTTus), cl, &e)
	return Ack{
		NowNs: uint64(ca.now_ns), AckedBytes: uint32(ca.acked_bytes), ECEBytes: uint32(ca.ece_bytes),
		CwndSegs: uint32(ca.cwnd_segs), MSS: uint32(ca.mss), SndNxt: uint32(ca.snd_nxt), SndUna: uint32(ca.snd_una),
		RTTus: uint32(ca.rtt_us), ECE: ca.flags&C.LAW_ACK_ECE != 0, NotCwndLimited: ca.flags&C.LAW_ACK_NOT_CWND_LIMITED != 0,
	}, e != 0
}

// EchoUE is glue_echo_ue: whether the law's ACK gets LAW_ACK_UE from the
// socket's newest echo (nil: none).
func EchoUE(e *Echo) bool {
	var ca C.struct_law_ack
	if e == nil {
		C.glue_echo_ue(&ca, nil)
	} else {
		var ce C.struct_int_echo
		echoToC(e, &ce)
		C.glue_echo_ue(&ca, &ce)
	}
	return ca.flags&C.LAW_ACK_UE != 0
}

// CEEcho is one receiving socket's state of glue_ce_event.
type CEEcho struct {
	state      C.__u8
	priorRcvNx C.__u32
}

// CEStep is struct glue_ce_step: what the glue does for one segment.
type CEStep struct {
	Flush       bool   // first acknowledge the earlier segments...
	FlushCE     bool   // ... echoing their state
	FlushRcvNxt uint32 // ... up to here
	AckNow      bool   // acknowledge this segment at once
}

// Segment is glue_ce_event: a data segment with CE bit ce arrived,
// rcv_nxt is now rcvNxt, and a delayed ACK was pending or not.
func (e *CEEcho) Segment(ce, delackPending bool, rcvNxt uint32) CEStep {
	var st C.struct_glue_ce_step
	c, pend := C.__u8(0), C.int(0)
	if ce {
		c = 1
	}
	if delackPending {
		pend = 1
	}
	C.glue_ce_event(&e.state, &e.priorRcvNx, c, pend, C.__u32(rcvNxt), &st)
	return CEStep{Flush: st.flush != 0, FlushCE: st.flush_ce != 0, FlushRcvNxt: uint32(st.flush_rcv_nxt), AckNow: st.ack_now != 0}
}
