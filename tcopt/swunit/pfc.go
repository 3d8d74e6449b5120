package swunit

/*
#include "userspace.h"
*/
import "C"

// The PFC unit's modes and crossings (pfc.h).
const (
	PFCOff     = C.PFC_OFF
	PFCStatic  = C.PFC_STATIC
	PFCDynamic = C.PFC_DYNAMIC

	PFCNone = C.PFC_NONE
	PFCXoff = C.PFC_XOFF
	PFCXon  = C.PFC_XON
)

// PFCShare is pfc_share: egress e's share of ingress i's occupancy.
func PFCShare(backlog, part, total uint64) uint64 {
	return uint64(C.pfc_share(C.__u64(backlog), C.__u64(part), C.__u64(total)))
}

// PFCOccupancy is ingress i's occupancy as the switch composes it from
// pfc_share: the sum over egress ports e of backlog[e] * bytes[e][i] /
// sum_j bytes[e][j].
func PFCOccupancy(backlog []uint64, bytes [][]uint64, i int) uint64 {
	var occ uint64
	for e, row := range bytes {
		var total uint64
		for _, b := range row {
			total += b
		}
		occ += PFCShare(backlog[e], row[i], total)
	}
	return occ
}

// PFCXoffThreshold is pfc_xoff.
func PFCXoffThreshold(mode uint32, xoff uint64, alphaPPM uint32, buffer, used uint64) uint64 {
	return uint64(C.pfc_xoff(C.__u32(mode), C.__u64(xoff), C.__u32(alphaPPM), C.__u64(buffer), C.__u64(used)))
}

// PFCXonThreshold is pfc_xon.
func PFCXonThreshold(xoff, hysteresis uint64) uint64 {
	return uint64(C.pfc_xon(C.__u64(xoff), C.__u64(hysteresis)))
}

// PFCStep is pfc_step: the crossing of an ingress queue in state paused.
func PFCStep(paused bool, occ, xoff, xon uint64) int {
	return int(C.pfc_step(C.__u32(cbool(paused)), C.__u64(occ), C.__u64(xoff), C.__u64(xon)))
}

// PFCHeadroom is pfc_headroom, bytes.
func PFCHeadroom(delayNs uint64, rateMbps, mtu uint32) uint64 {
	return uint64(C.pfc_headroom(C.__u64(delayNs), C.__u32(rateMbps), C.__u32(mtu)))
}
