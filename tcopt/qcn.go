package tcopt

// QCN feedback records (int_option.h: INT_REC_QCN, int_qcn_encode and
// int_qcn_decode; layout in tcopt/README.md, "QCN feedback").
const (
	QCNRate  = 31 // the rate code that marks a QCN feedback record
	QCNFbMax = 63 // largest quantised |Fb|
	qcnCPMax = 0xfff
)

// QCN is a QCN congestion point's feedback, decoded.
type QCN struct {
	Fb   uint8  // |Fb| quantised, 1..QCNFbMax
	CP   uint16 // the congestion point (switch port slot, 12 bits)
	Seq  uint16 // the CP's sample number, wrapping
	Qlen uint32 // the CP's queue when it sampled, bytes (QlenUnit steps)
}

// NewQCNRecord builds the record a congestion point writes (fields wider
// than their widths are truncated, qlen saturates like a hop record's).
func NewQCNRecord(fb uint8, cp, seq uint16, qlen uint64) Record {
	q := qlen / QlenUnit
	if q > QlenMax {
		q = QlenMax
	}
	v := uint64(QCNRate)<<51 | uint64(fb&QCNFbMax)<<45 |
		uint64(cp&qcnCPMax)<<33 | uint64(seq)<<17 | q<<2
	return recordOf(v)
}

// QCN decodes a QCN feedback record; ok=false for any other record and for
// one with Fb 0, which a congestion point never sends.
func (r Record) QCN() (q QCN, ok bool) {
	v := r.bits()
	if v>>51 != QCNRate || (v>>45)&QCNFbMax == 0 {
		return QCN{}, false
	}
	return QCN{
		Fb:   uint8(v>>45) & QCNFbMax,
		CP:   uint16(v>>33) & qcnCPMax,
		Seq:  uint16(v >> 17),
		Qlen: uint32((v>>2)&QlenMax) * QlenUnit,
	}, true
}

// QCNs returns the option's QCN feedback records, in order.
func (o Option) QCNs() []QCN {
	var qs []QCN
	for _, r := range o.Records {
		if q, ok := r.QCN(); ok {
			qs = append(qs, q)
		}
	}
	return qs
}
