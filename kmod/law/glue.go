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
