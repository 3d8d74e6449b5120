package tcpsample

import (
	"testing"
	"time"
	"unsafe"

	"cclab/internal/testnet"
)

// A tcp_info cut at any length, as an older kernel sends it, yields the
// fields that fit whole with the values of the full struct, and no others
// (absent and zero, not bytes from beyond the end). The struct is a live
// socket's, read with getsockopt; the field ends are include/uapi/linux/tcp.h's.
func TestShortTCPInfo(t *testing.T) {
	a, b := testnet.Pair(t)
	c := connect(t, a, b, 7004, "reno", "reno", 0)
	c.pump()
	c.drain()
	time.Sleep(100 * time.Millisecond)
	info := tcpInfo(t, c.sender)
	raw := unsafe.Slice((*byte)(unsafe.Pointer(info)), unsafe.Sizeof(*info))

	var full Flow
	readTCPInfo(raw, &full)
	if full.Cwnd != info.Snd_cwnd || full.MSS != info.Snd_mss || full.SRTT != micros(info.Rtt) ||
		full.BytesAcked != info.Bytes_acked || full.DeliveryRate != info.Delivery_rate*8 || full.BytesAcked == 0 {
		t.Fatalf("full tcp_info read as %+v; getsockopt has %+v", full, *info)
	}
	b2u := func(v bool) uint64 {
		if v {
			return 1
		}
		return 0
	}
	fields := []struct {
		name string
		have Fields
		end  int // offset + size
		get  func(Flow) uint64
	}{
		{"snd_mss", HaveMSS, 20, func(f Flow) uint64 { return uint64(f.MSS) }},
		{"rtt", HaveSRTT, 72, func(f Flow) uint64 { return uint64(f.SRTT) }},
		{"rttvar", HaveRTTVar, 76, func(f Flow) uint64 { return uint64(f.RTTVar) }},
		{"snd_cwnd", HaveCwnd, 84, func(f Flow) uint64 { return uint64(f.Cwnd) }},
		{"total_retrans", HaveTotalRetrans, 104, func(f Flow) uint64 { return uint64(f.TotalRetrans) }},
		{"pacing_rate", HavePacingRate, 112, func(f Flow) uint64 { return f.PacingRate }},
		{"bytes_acked", HaveBytesAcked, 128, func(f Flow) uint64 { return f.BytesAcked }},
		{"bytes_received", HaveBytesRecv, 136, func(f Flow) uint64 { return f.BytesRecv }},
		{"min_rtt", HaveMinRTT, 152, func(f Flow) uint64 { return uint64(f.MinRTT) }},
		{"delivery_rate", HaveDeliveryRate, 168, func(f Flow) uint64 { return f.DeliveryRate }},
		{"delivery_rate_app_limited", HaveDeliveryRate, 168, func(f Flow) uint64 { return b2u(f.AppLimited) }},
	}
	for cut := 0; cut <= len(raw); cut++ {
		var f Flow
		readTCPInfo(raw[:cut:cut], &f)
		for _, fd := range fields {
			switch present := cut >= fd.end; {
			case f.Have.Has(fd.have) != present:
				t.Errorf("%d bytes: %s present %v, want %v", cut, fd.name, f.Have.Has(fd.have), present)
			case present && fd.get(f) != fd.get(full):
				t.Errorf("%d bytes: %s %d, full struct %d", cut, fd.name, fd.get(f), fd.get(full))
			case !present && fd.get(f) != 0:
				t.Errorf("%d bytes: absent %s reads %d, want 0", cut, fd.name, fd.get(f))
			}
		}
	}
}
