package tcopt

// Record is one hop record as it is on the wire: each field in its unit,
// already truncated to its width.
type Record struct {
	Rate uint8  // rate code (5 bits); valid are 1..RateCodeMax
	Qlen uint16 // queue length in QlenUnit (15 bits)
	Tx   uint32 // transmitted bytes in TxUnit, wrapping (18 bits)
	TS   uint32 // the port's transmit clock in TSUnit, wrapping (18 bits)
}

// Hop is a record in plain units, like struct int_hop.
type Hop struct {
	Qlen     uint32 // bytes queued
	TxBytes  uint32 // bytes transmitted, mod TxWrap
	TS       uint32 // CLOCK_MONOTONIC ns, the port's transmit clock, mod TSWrap
	RateMbps uint32
}

// NewRecord builds a record from raw port counters the way a switch stamps
// one (int_rec_encode): qlen and txBytes in bytes, tsNs the record's time.
func NewRecord(rateCode uint8, qlen, txBytes, tsNs uint64) Record {
	q := qlen / QlenUnit
	if q > QlenMax {
		q = QlenMax
	}
	return Record{
		Rate: rateCode & 0x1f,
		Qlen: uint16(q),
		Tx:   uint32(txBytes/TxUnit) & TxMask,
		TS:   uint32(tsNs/TSUnit) & TSMask,
	}
}

// Valid reports whether a reader may use the record (rate code 1..20).
func (r Record) Valid() bool { return r.Rate != 0 && r.Rate <= RateCodeMax }

// Hop converts a valid record to plain units; ok=false for one a reader
// must ignore.
func (r Record) Hop() (h Hop, ok bool) {
	mbps, ok := RateMbps(r.Rate)
	if !ok {
		return Hop{}, false
	}
	return Hop{
		Qlen:     uint32(r.Qlen) * QlenUnit,
		TxBytes:  r.Tx * TxUnit,
		TS:       r.TS * TSUnit,
		RateMbps: mbps,
	}, true
}

// put writes the record's 56 bits big-endian into p[0:7]. Fields wider
// than their width are truncated.
func (r Record) put(p []byte) {
	v := r.bits()
	_ = p[6]
	for i := 0; i < 7; i++ {
		p[i] = byte(v >> (48 - 8*i))
	}
}

// bits is the record's 56 bits, as on the wire.
func (r Record) bits() uint64 {
	return uint64(r.Rate&0x1f)<<51 | uint64(r.Qlen&QlenMax)<<36 |
		uint64(r.Tx&TxMask)<<18 | uint64(r.TS&TSMask)
}

func getRecord(p []byte) Record {
	_ = p[6]
	var v uint64
	for i := 0; i < 7; i++ {
		v = v<<8 | uint64(p[i])
	}
	return recordOf(v)
}

// recordOf splits 56 bits into the record's fields.
func recordOf(v uint64) Record {
	return Record{
		Rate: uint8(v >> 51),
		Qlen: uint16(v>>36) & QlenMax,
		Tx:   uint32(v>>18) & TxMask,
		TS:   uint32(v) & TSMask,
	}
}
