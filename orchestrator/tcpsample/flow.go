package tcpsample

import (
	"fmt"
	"net/netip"
	"time"
)

// Flow is one TCP socket of one host at one sample. A connection between
// two sampled hosts shows up twice, once from each end.
type Flow struct {
	Host   string         // the Host's Name
	Local  netip.AddrPort // this end (an IPv4-mapped IPv6 address is given as IPv4)
	Remote netip.AddrPort // the other end
	State  State
	// CC is the socket's congestion control ("reno", "cubic", a cclab
	// law ...); "" when the kernel sent no name.
	CC string

	// From struct tcp_info; Have says which ones the kernel sent (an
	// older kernel's shorter tcp_info lacks the later fields, which are
	// then zero).
	Have       Fields
	Cwnd       uint32        // snd_cwnd, segments
	MSS        uint32        // snd_mss, bytes
	SRTT       time.Duration // smoothed RTT (tcpi_rtt, microsecond resolution)
	RTTVar     time.Duration // its mean deviation (tcpi_rttvar)
	MinRTT     time.Duration // windowed minimum RTT (tcpi_min_rtt)
	PacingRate uint64        // bits/s; Unlimited when the socket has no pacing rate
	// DeliveryRate is the kernel's latest delivery rate sample, bits/s:
	// the data acknowledged over the longer of one sample's send and ACK
	// intervals. Through a bottleneck it follows the goodput; on a bare
	// veth (no bottleneck, RTT of microseconds) its samples catch bursts:
	// a flow paced at 200 Mbit/s read 5-15 Gbit/s there, an unlimited one
	// kept one value for seconds. AppLimited marks a sample the
	// application limited.
	DeliveryRate uint64
	AppLimited   bool
	BytesAcked   uint64 // payload bytes the peer acknowledged (+1 for the SYN on the connecting end)
	BytesRecv    uint64 // payload bytes received in order
	TotalRetrans uint32 // segments retransmitted over the connection's life

	// When the host was sampled: CLOCK_MONOTONIC in nanoseconds (the clock
	// of flows.csv and of BPF's bpf_ktime_get_ns) and the wall clock. All
	// flows of one host in one sample share them.
	Mono int64
	Wall time.Time
}

// Unlimited is PacingRate for a socket without a pacing rate.
const Unlimited = ^uint64(0)

// Fields is a set of tcp_info fields a Flow holds.
type Fields uint16

const (
	HaveCwnd Fields = 1 << iota
	HaveMSS
	HaveSRTT
	HaveRTTVar
	HaveTotalRetrans
	HavePacingRate
	HaveBytesAcked
	HaveBytesRecv
	HaveMinRTT
	HaveDeliveryRate // and AppLimited, which came with it (Linux 4.9)
)

// Has reports whether all of want are present.
func (f Fields) Has(want Fields) bool { return f&want == want }

// State is a TCP state as the kernel numbers them (include/net/tcp_states.h).
type State uint8

const (
	Established State = 1
	FinWait1    State = 4
	FinWait2    State = 5
	CloseWait   State = 8
	LastAck     State = 9
	Closing     State = 11
)

// sampledStates are the states a sample reports (a bit per state, as
// inet_diag's filter takes them): those of a connected socket that can
// still move data. FIN-WAIT-1 and LAST-ACK drain what the application wrote
// before it closed, CLOSE-WAIT may still send, FIN-WAIT-2 still receives
// and CLOSING still holds a live congestion state. Listeners, handshakes
// and TIME-WAIT carry no data (and TIME-WAIT has no tcp_info).
const sampledStates uint32 = 1<<Established | 1<<FinWait1 | 1<<FinWait2 | 1<<CloseWait | 1<<LastAck | 1<<Closing

func (s State) String() string {
	switch s {
	case Established:
		return "ESTABLISHED"
	case FinWait1:
		return "FIN-WAIT-1"
	case FinWait2:
		return "FIN-WAIT-2"
	case CloseWait:
		return "CLOSE-WAIT"
	case LastAck:
		return "LAST-ACK"
	case Closing:
		return "CLOSING"
	}
	return fmt.Sprintf("state-%d", uint8(s))
}
