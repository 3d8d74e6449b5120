// Package swunit holds the INT switch's behaviour units (int_stamp.h,
// ecn_mark.h, qcn_cp.h, tcd_state.h, pfc.h), the pure C cores tcopt/bpf/switch.bpf.c is
// composed of, and runs them in user space through cgo, so that tests can hold them
// against the specification (tcopt/README.md, switch_maps.h) without a
// kernel.
package swunit

/*
#include "userspace.h"
*/
import "C"

import "unsafe"

// Constants of the units, as the C headers define them.
const (
	ECNPPM    = C.ECN_PPM
	P32One    = uint64(C.ECN_P32_ONE) // certain marking, in units of 2^-32
	QCNW      = C.QCN_W
	JitterPct = C.QCN_JITTER_PCT
	MaxOpts   = C.TCP_MAX_OPTS
)

// ECNP32 is ecn_mark_p32: the marking probability in units of 2^-32 of a
// packet leaving with qlen bytes behind it.
func ECNP32(kmin, kmax, ppm, qlen uint64) uint64 {
	return uint64(C.ecn_mark_p32(C.__u64(kmin), C.__u64(kmax), C.__u64(ppm), C.__u64(qlen)))
}

// ECNDraw is ecn_mark_draw.
func ECNDraw(p32 uint64, rnd uint32) bool { return C.ecn_mark_draw(C.__u64(p32), C.__u32(rnd)) != 0 }

// ECNMarkable is ecn_markable: whether a packet of this TOS byte is marked.
func ECNMarkable(tos uint8) bool { return C.ecn_markable(C.__u8(tos)) != 0 }

// QCNCrossed is qcn_cp_crossed.
func QCNCrossed(before int64, length uint32) bool {
	return C.qcn_cp_crossed(C.__s64(before), C.__u32(length)) != 0
}

// QCNInterval is qcn_cp_interval.
func QCNInterval(every uint64, rnd uint32) int64 {
	return int64(C.qcn_cp_interval(C.__u64(every), C.__u32(rnd)))
}

// QCNRefill is qcn_cp_refill.
func QCNRefill(after, next int64) int64 { return int64(C.qcn_cp_refill(C.__s64(after), C.__s64(next))) }

// QCNFeedback is qcn_cp_feedback: the quantised feedback, 0 for none.
func QCNFeedback(q, qold, qeq uint64) uint8 {
	return uint8(C.qcn_cp_feedback(C.__u64(q), C.__u64(qold), C.__u64(qeq)))
}

// TCDState is enum tcd_state: a port's TCD state for one packet.
type TCDState int

// The TCD states.
const (
	NonCongestion TCDState = C.TCD_NON_CONGESTION
	Undetermined  TCDState = C.TCD_UNDETERMINED
	Congestion    TCDState = C.TCD_CONGESTION
)

func (s TCDState) String() string {
	return map[TCDState]string{NonCongestion: "non-congestion", Undetermined: "undetermined", Congestion: "congestion"}[s]
}

// PortState is tcd_port_state.
func PortState(qlen, k uint64, paused bool, lastXonNs, now, maxTonNs uint64) TCDState {
	var p C.__u32
	if paused {
		p = 1
	}
	return TCDState(C.tcd_port_state(C.__u64(qlen), C.__u64(k), p, C.__u64(lastXonNs), C.__u64(now), C.__u64(maxTonNs)))
}

// Record is int_stamp_record: the 7 record bytes.
func Record(rateMbps uint32, qlen, txBytes, ts uint64) [7]byte {
	var rec [7]C.__u8
	C.int_stamp_record(&rec[0], C.__u32(rateMbps), C.__u64(qlen), C.__u64(txBytes), C.__u64(ts))
	var out [7]byte
	for i := range rec {
		out[i] = byte(rec[i])
	}
	return out
}

// SerNs is int_stamp_ser_ns.
func SerNs(length, rateMbps uint32) uint64 {
	return uint64(C.int_stamp_ser_ns(C.__u32(length), C.__u32(rateMbps)))
}

// TxDone is int_stamp_tx_done.
func TxDone(clock, now, ser uint64) uint64 {
	return uint64(C.int_stamp_tx_done(C.__u64(clock), C.__u64(now), C.__u64(ser)))
}

// WireLen is int_stamp_wire_len.
func WireLen(length, gsoSize, gsoSegs, hdrLen uint32) uint64 {
	return uint64(C.int_stamp_wire_len(C.__u32(length), C.__u32(gsoSize), C.__u32(gsoSegs), C.__u32(hdrLen)))
}

// FindOption is int_stamp_find_option over an option area (at most
// MaxOpts bytes).
func FindOption(opts []byte) int {
	var area [MaxOpts]C.__u8
	n := copyArea(&area, opts)
	return int(C.int_stamp_find_option(&area[0], C.__u32(n)))
}

// Result is enum int_stamp_result.
type Result int

// The results of Write.
const (
	Written Result = C.INT_STAMP_WRITTEN
	Full    Result = C.INT_STAMP_FULL
	None    Result = C.INT_STAMP_NONE
)

// StampTCD is enum int_stamp_tcd: the header version a stamping port
// writes.
type StampTCD int

// The TCD modes of WriteTCD.
const (
	TCDOff StampTCD = C.INT_STAMP_TCD_OFF // the option keeps its version
	TCDOn  StampTCD = C.INT_STAMP_TCD_ON  // v1, U as it was
	TCDUE  StampTCD = C.INT_STAMP_TCD_UE  // v1 with U
)

// Write is int_stamp_write with TCD off: the option area with rec written
// (or the option flagged full), and what it did. The area returned is
// the input's when nothing changed.
func Write(opts []byte, rec [7]byte, flagFull, echo bool) ([]byte, Result) {
	return WriteTCD(opts, rec, flagFull, echo, TCDOff)
}

// WriteTCD is int_stamp_write.
func WriteTCD(opts []byte, rec [7]byte, flagFull, echo bool, tcd StampTCD) ([]byte, Result) {
	var area, next [MaxOpts]C.__u8
	n := copyArea(&area, opts)
	var crec [7]C.__u8
	for i := range rec {
		crec[i] = C.__u8(rec[i])
	}
	res := Result(C.int_stamp_write(&area[0], &next[0], C.__u32(n), &crec[0], cbool(flagFull), cbool(echo), C.int(tcd)))
	out := append([]byte(nil), opts...)
	if res == Written || (res == Full && flagFull) {
		for i := 0; i < n; i++ {
			out[i] = byte(next[i])
		}
	}
	return out, res
}

// copyArea copies an option area into a zeroed TCP_MAX_OPTS array, as
// switch.bpf.c loads it, and returns its length (truncated to MaxOpts).
func copyArea(area *[MaxOpts]C.__u8, opts []byte) int {
	n := min(len(opts), MaxOpts)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&area[0])), MaxOpts), opts[:n])
	return n
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
