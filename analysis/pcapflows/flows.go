package pcapflows

import (
	"net/netip"
	"time"
)

// Status says how far a flow got in the capture. Only StatusComplete flows
// have an FCT; the others are reported, never counted as finished.
type Status string

// The states a flow ends the capture in (analysis/README.md defines them).
const (
	StatusComplete   Status = "complete"   // closed, every data byte acknowledged
	StatusOpen       Status = "open"       // every data byte acknowledged, no FIN/RST captured
	StatusIncomplete Status = "incomplete" // data not acknowledged to the end
	StatusReset      Status = "reset"      // RST before every data byte was acknowledged
	StatusNoData     Status = "no-data"    // no payload in either direction
)

// Flow is one TCP connection in a capture. Times are nanoseconds on the
// capture's clock (Unix epoch, CLOCK_REALTIME for cclab's captures).
type Flow struct {
	ID             int            `json:"id"`
	Client         netip.AddrPort `json:"client"` // SYN sender; first packet's source when no SYN was captured
	Server         netip.AddrPort `json:"server"`
	HandshakeSeen  bool           `json:"handshake_seen"`
	DataFromClient bool           `json:"data_from_client"` // direction carrying the most payload
	Start          int64          `json:"start_ns"`         // first SYN, or first data byte without handshake
	End            int64          `json:"end_ns"`           // ACK covering the last data byte; 0 if none
	FCT            time.Duration  `json:"fct_ns"`           // End - Start when Status is complete, else 0
	Bytes          uint64         `json:"bytes"`            // unique payload bytes in the data direction
	ReverseBytes   uint64         `json:"reverse_bytes"`    // unique payload bytes the other way
	Packets        uint64         `json:"packets"`
	DataPackets    uint64         `json:"data_packets"`  // segments with payload, data direction
	Retransmits    uint64         `json:"retransmits"`   // data-direction segments overlapping bytes already sent
	RetransBytes   uint64         `json:"retrans_bytes"` // payload bytes sent more than once
	FirstData      int64          `json:"first_data_ns"`
	LastData       int64          `json:"last_data_ns"`
	// LastUseful is the last data segment carrying bytes the peer had not
	// acknowledged yet (as this capture saw the ACKs): in the receiver's
	// capture, when the last missing byte arrived; a spurious
	// retransmission after everything was acknowledged does not count.
	LastUseful int64  `json:"last_useful_ns"`
	FIN        bool   `json:"fin"`
	RST        bool   `json:"rst"`
	Status     Status `json:"status"`
}

// Sender and Receiver are the ends of the data direction.
func (f *Flow) Sender() netip.AddrPort {
	if f.DataFromClient {
		return f.Client
	}
	return f.Server
}

// Receiver is the end the data goes to.
func (f *Flow) Receiver() netip.AddrPort {
	if f.DataFromClient {
		return f.Server
	}
	return f.Client
}

// flowKey is the connection's address pair with the lower endpoint first,
// so both directions find the same flow.
type flowKey struct {
	a, b   [16]byte
	pa, pb uint16
}

func keyOf(s *segment) (k flowKey, fromA bool) {
	if lessEndpoint(s.src, s.sport, s.dst, s.dport) {
		return flowKey{a: s.src, b: s.dst, pa: s.sport, pb: s.dport}, true
	}
	return flowKey{a: s.dst, b: s.src, pa: s.dport, pb: s.sport}, false
}

func lessEndpoint(a [16]byte, pa uint16, b [16]byte, pb uint16) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return pa <= pb
}

// direction is one half of a connection: the bytes one end sends, and the
// acknowledgements its peer returns for them. Sequence numbers are turned
// into 64-bit offsets from base, so wraparound is invisible past here.
type direction struct {
	init      bool
	synSeen   bool
	synSeq    uint32
	base      uint32 // wire sequence number of relative byte 0
	ref32     uint32 // highest sequence number seen, on the wire
	refRel    int64  // ... and relative to base
	maxEnd    int64  // highest relative end of payload sent
	fin       bool
	packets   uint64
	dataPkts  uint64
	retrans   uint64
	retransB  uint64
	firstData int64
	lastData  int64
	useful    int64 // last segment with bytes beyond the peer's ACK

	ackInit   bool
	ack32     uint32
	ackRel    int64 // highest acknowledgement from the peer, relative to base
	coverTime int64 // when the peer's ACK first covered maxEnd; 0 while it does not
}

// unwrap maps a wire sequence number near the highest one seen onto the
// 64-bit relative line; it is correct while segments are within 2 GiB of
// each other, which TCP's window guarantees.
func (d *direction) unwrap(seq uint32) int64 {
	r := d.refRel + int64(int32(seq-d.ref32))
	if r > d.refRel {
		d.ref32, d.refRel = seq, r
	}
	return r
}

func (d *direction) start(base uint32) {
	d.init = true
	d.base, d.ref32, d.refRel = base, base, 0
}

// acked records an acknowledgement number from the peer.
func (d *direction) acked(ack uint32, ts int64) {
	if !d.init {
		return
	}
	if !d.ackInit {
		d.ackInit = true
		d.ack32 = ack
		d.ackRel = int64(int32(ack - d.base))
	} else {
		r := d.ackRel + int64(int32(ack-d.ack32))
		if r <= d.ackRel {
			return
		}
		d.ack32, d.ackRel = ack, r
	}
	if d.maxEnd > 0 && d.ackRel >= d.maxEnd && d.coverTime == 0 {
		d.coverTime = ts
	}
}

// sent records a segment of this direction; it returns the payload bytes
// never sent before.
func (d *direction) sent(s *segment, ts int64) (newBytes uint32) {
	d.packets++
	if s.flags&flagSYN != 0 {
		d.synSeen, d.synSeq = true, s.seq
		d.start(s.seq + 1)
		if s.payloadLen == 0 {
			return 0
		}
	}
	if !d.init {
		d.start(s.seq)
	}
	begin := d.unwrap(s.seq)
	if s.flags&flagSYN != 0 {
		begin++ // TCP Fast Open data follows the SYN's sequence number
	}
	if s.flags&flagFIN != 0 {
		d.fin = true
	}
	if s.payloadLen == 0 {
		return 0
	}
	end := begin + int64(s.payloadLen)
	d.dataPkts++
	if d.firstData == 0 {
		d.firstData = ts
	}
	d.lastData = ts
	if !d.ackInit || end > d.ackRel {
		d.useful = ts
	}
	if begin < d.maxEnd {
		d.retrans++
		d.retransB += uint64(min(end, d.maxEnd) - begin)
	}
	if end > d.maxEnd {
		newBytes = uint32(end - max(begin, d.maxEnd))
		d.maxEnd = end
		if d.ackRel < end {
			d.coverTime = 0
		}
	}
	return newBytes
}

// conn is a connection being tracked; a is the lower endpoint of its key.
type conn struct {
	id          int
	aIsClient   bool
	clientKnown bool
	synTime     int64
	first, last int64
	rst         bool
	dir         [2]direction // [0] sent by endpoint a, [1] by endpoint b
	aAddr       netip.AddrPort
	bAddr       netip.AddrPort
}

// isNewConnection says whether a SYN on an existing tuple opens a new
// connection (port reuse) rather than repeating the old one's SYN.
func (c *conn) isNewConnection(s *segment, fromA bool) bool {
	if s.flags&(flagSYN|flagACK) != flagSYN {
		return false
	}
	d := &c.dir[1]
	if fromA {
		d = &c.dir[0]
	}
	if d.synSeen && d.synSeq == s.seq {
		return false // a retransmitted SYN
	}
	return true
}

func (c *conn) result() Flow {
	f := Flow{ID: c.id, FIN: c.dir[0].fin || c.dir[1].fin, RST: c.rst}
	ci := 0 // index of the client's direction
	if !c.aIsClient {
		ci = 1
	}
	f.Client, f.Server = c.aAddr, c.bAddr
	if ci == 1 {
		f.Client, f.Server = c.bAddr, c.aAddr
	}
	f.HandshakeSeen = c.clientKnown && c.synTime != 0
	cd, sd := &c.dir[ci], &c.dir[1-ci]
	data, rev := cd, sd
	f.DataFromClient = true
	if sd.maxEnd > cd.maxEnd {
		data, rev = sd, cd
		f.DataFromClient = false
	}
	f.Packets = cd.packets + sd.packets
	f.Bytes = uint64(max(data.maxEnd, 0))
	f.ReverseBytes = uint64(max(rev.maxEnd, 0))
	f.DataPackets, f.Retransmits, f.RetransBytes = data.dataPkts, data.retrans, data.retransB
	f.FirstData, f.LastData, f.LastUseful = data.firstData, data.lastData, data.useful
	if f.HandshakeSeen {
		f.Start = c.synTime
	} else {
		f.Start = data.firstData
	}
	allAcked := data.maxEnd > 0 && data.coverTime != 0
	if allAcked {
		f.End = data.coverTime
	}
	switch {
	case data.maxEnd <= 0:
		f.Status = StatusNoData
	case allAcked && (f.FIN || f.RST):
		f.Status = StatusComplete
		f.FCT = time.Duration(f.End - f.Start)
	case allAcked:
		f.Status = StatusOpen
	case c.rst:
		f.Status = StatusReset
	default:
		f.Status = StatusIncomplete
	}
	return f
}
