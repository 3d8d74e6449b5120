package tcpsample

import (
	"encoding/binary"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Offsets into struct tcp_info (include/uapi/linux/tcp.h), taken from
// x/sys's copy of it: the kernel only ever appends fields, so an offset
// never moves, and a kernel older than the field sends a shorter struct.
const (
	offFlags        = 7 // tcpi_delivery_rate_app_limited:1, tcpi_fastopen_client_fail:2
	offMSS          = unsafe.Offsetof(unix.TCPInfo{}.Snd_mss)
	offRTT          = unsafe.Offsetof(unix.TCPInfo{}.Rtt)
	offRTTVar       = unsafe.Offsetof(unix.TCPInfo{}.Rttvar)
	offCwnd         = unsafe.Offsetof(unix.TCPInfo{}.Snd_cwnd)
	offTotalRetrans = unsafe.Offsetof(unix.TCPInfo{}.Total_retrans)
	offPacingRate   = unsafe.Offsetof(unix.TCPInfo{}.Pacing_rate)
	offBytesAcked   = unsafe.Offsetof(unix.TCPInfo{}.Bytes_acked)
	offBytesRecv    = unsafe.Offsetof(unix.TCPInfo{}.Bytes_received)
	offMinRTT       = unsafe.Offsetof(unix.TCPInfo{}.Min_rtt)
	offDeliveryRate = unsafe.Offsetof(unix.TCPInfo{}.Delivery_rate)
)

// tcpInfoReader reads fields of a tcp_info of whatever length the kernel
// sent: a field that does not fit entirely is absent.
type tcpInfoReader struct {
	b    []byte
	have Fields
}

func (r *tcpInfoReader) u32(off uintptr, f Fields) uint32 {
	if uintptr(len(r.b)) < off+4 {
		return 0
	}
	r.have |= f
	return binary.NativeEndian.Uint32(r.b[off:])
}

func (r *tcpInfoReader) u64(off uintptr, f Fields) uint64 {
	if uintptr(len(r.b)) < off+8 {
		return 0
	}
	r.have |= f
	return binary.NativeEndian.Uint64(r.b[off:])
}

func micros(us uint32) time.Duration { return time.Duration(us) * time.Microsecond }

// bits turns a tcp_info rate (bytes per second) into bits per second; the
// kernel's "no rate" (all ones) stays Unlimited.
func bits(bytesPerSec uint64) uint64 {
	if bytesPerSec > Unlimited/8 {
		return Unlimited
	}
	return bytesPerSec * 8
}

// readTCPInfo fills f's tcp_info fields from b (INET_DIAG_INFO's payload).
func readTCPInfo(b []byte, f *Flow) {
	r := tcpInfoReader{b: b}
	f.MSS = r.u32(offMSS, HaveMSS)
	f.SRTT = micros(r.u32(offRTT, HaveSRTT))
	f.RTTVar = micros(r.u32(offRTTVar, HaveRTTVar))
	f.Cwnd = r.u32(offCwnd, HaveCwnd)
	f.TotalRetrans = r.u32(offTotalRetrans, HaveTotalRetrans)
	f.PacingRate = bits(r.u64(offPacingRate, HavePacingRate))
	f.BytesAcked = r.u64(offBytesAcked, HaveBytesAcked)
	f.BytesRecv = r.u64(offBytesRecv, HaveBytesRecv)
	f.MinRTT = micros(r.u32(offMinRTT, HaveMinRTT))
	f.DeliveryRate = bits(r.u64(offDeliveryRate, HaveDeliveryRate))
	// The app-limited bit lives in a byte every tcp_info has, but means
	// something only on kernels that send the delivery rate.
	if r.have.Has(HaveDeliveryRate) {
		f.AppLimited = b[offFlags]&1 != 0 // the first bit field of the byte: bit 0 on little-endian hosts
	}
	f.Have = r.have
}
