// Package tcopt is the Go twin of int_option.h: the cclab INT TCP option
// (wire format specified in tcopt/README.md), encoded and decoded.
package tcopt

// Framing and sizes (int_option.h: INT_OPT_*, INT_REC_LEN, INT_MAX_HOPS).
const (
	Kind     = 253    // RFC 6994 experimental option kind
	ExID     = 0xCC1A // our 16-bit experiment id
	BaseLen  = 5      // kind, len, ExID (2), header byte
	RecLen   = 7      // one hop record
	MaxHops  = 5      // records that fit 40 bytes of option space
	MaxLen   = BaseLen + MaxHops*RecLen
	Version  = 0    // v0 header: VV E O HHHH
	V1       = 1    // v1 header: VV E O U HHH (TCD), written by switches with TCD on
	HdrEcho  = 0x20 // set on an ACK's echo of forward records
	HdrOvfl  = 0x10 // a switch found no free record slot
	HopsMask = 0x0f // v0
	HdrUE    = 0x08 // v1: U, a port on the path was undetermined (TCD)

	HopsMaskV1 = 0x07 // v1
)

// Record field widths and units (int_option.h: INT_*_BITS, INT_*_UNIT).
const (
	QlenUnit = 128 // bytes; saturates at QlenMax units
	TxUnit   = 128 // bytes; wraps after TxWrap
	TSUnit   = 256 // ns; wraps after TSWrap

	QlenMax = 1<<15 - 1
	TxMask  = 1<<18 - 1
	TSMask  = 1<<18 - 1

	TxWrap = (TxMask + 1) * TxUnit // 32 MiB
	TSWrap = (TSMask + 1) * TSUnit // ~67.1 ms
)

// RateCodeMax is the largest valid rate code; 0 means unknown.
const RateCodeMax = 20

var rateMbps = [RateCodeMax + 1]uint32{
	0, 10, 20, 50, 100, 200, 250, 500, 1000, 2000, 2500,
	5000, 10000, 20000, 25000, 40000, 50000, 100000, 200000, 400000, 800000,
}

// RateCode is the code of a port rate in Mbit/s, or 0 when it has none.
func RateCode(mbps uint32) uint8 {
	for c := uint8(1); c <= RateCodeMax; c++ {
		if rateMbps[c] == mbps {
			return c
		}
	}
	return 0
}

// RateMbps is the rate of a code, ok=false for 0 and codes above RateCodeMax.
func RateMbps(code uint8) (mbps uint32, ok bool) {
	if code == 0 || code > RateCodeMax {
		return 0, false
	}
	return rateMbps[code], true
}

// TxDelta is the forward difference of two wrapping tx byte counts.
func TxDelta(later, earlier uint32) uint32 { return (later - earlier) & (TxWrap - 1) }

// TSDelta is the forward difference of two wrapping timestamps (ns).
func TSDelta(later, earlier uint32) uint32 { return (later - earlier) & (TSWrap - 1) }

// SlotsOf is the number of record slots of an option of length l, or -1
// when l cannot be an INT option length.
func SlotsOf(l int) int {
	if l < BaseLen || l > MaxLen || (l-BaseLen)%RecLen != 0 {
		return -1
	}
	return (l - BaseLen) / RecLen
}
