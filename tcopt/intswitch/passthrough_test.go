package intswitch

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cclab/internal/nsexec"
	"cclab/internal/units"
)

// frameBuilder makes raw Ethernet frames from a switch port to its peer.
type frameBuilder struct {
	src, dst net.HardwareAddr
	seq      uint32
}

func ipChecksum(h []byte) uint16 { return ^fold(csum16(0, h)) }

// marker ends every frame so the capture can find it again.
func (fb *frameBuilder) marker() []byte {
	fb.seq++
	return []byte(fmt.Sprintf("ccpt%04d", fb.seq))
}

func (fb *frameBuilder) eth(ethType uint16, body []byte) []byte {
	f := append(append(append([]byte{}, fb.dst...), fb.src...), byte(ethType>>8), byte(ethType))
	return append(f, body...)
}

// tcp4 builds an IPv4 TCP frame with the given option area (a multiple of
// 4 bytes), data offset (0: computed) and IP flags/fragment word.
func (fb *frameBuilder) tcp4(opts []byte, doff int, frag uint16) []byte {
	payload := append([]byte("payload-"), fb.marker()...)
	if doff == 0 {
		doff = 5 + len(opts)/4
	}
	tcp := make([]byte, 20, 20+len(opts)+len(payload))
	binary.BigEndian.PutUint16(tcp[0:], 40000)
	binary.BigEndian.PutUint16(tcp[2:], 5201)
	binary.BigEndian.PutUint32(tcp[4:], 1000+fb.seq)
	tcp[12] = byte(doff << 4)
	tcp[13] = 0x18 // PSH ACK
	binary.BigEndian.PutUint16(tcp[14:], 65535)
	tcp = append(append(tcp, opts...), payload...)
	ip := make([]byte, 20)
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(20+len(tcp)))
	binary.BigEndian.PutUint16(ip[4:], uint16(fb.seq))
	binary.BigEndian.PutUint16(ip[6:], frag)
	ip[8], ip[9] = 64, 6
	copy(ip[12:], net.IPv4(10, 9, 0, 1).To4())
	copy(ip[16:], net.IPv4(10, 9, 1, 2).To4())
	binary.BigEndian.PutUint16(ip[10:], ipChecksum(ip))
	ps := csum16(0, ip[12:20]) + 6 + uint32(len(tcp))
	binary.BigEndian.PutUint16(tcp[16:], ^fold(csum16(ps, tcp)))
	return fb.eth(0x0800, append(ip, tcp...))
}

func (fb *frameBuilder) udp4(body []byte) []byte {
	payload := append(append([]byte{}, body...), fb.marker()...)
	udp := make([]byte, 8)
	binary.BigEndian.PutUint16(udp[0:], 40000)
	binary.BigEndian.PutUint16(udp[2:], 5201)
	binary.BigEndian.PutUint16(udp[4:], uint16(8+len(payload)))
	udp = append(udp, payload...)
	ip := make([]byte, 20)
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(20+len(udp)))
	ip[8], ip[9] = 64, 17
	copy(ip[12:], net.IPv4(10, 9, 0, 1).To4())
	copy(ip[16:], net.IPv4(10, 9, 1, 2).To4())
	binary.BigEndian.PutUint16(ip[10:], ipChecksum(ip))
	return fb.eth(0x0800, append(ip, udp...))
}

// tcp6 builds an IPv6 TCP frame: the switch leaves IPv6 alone.
func (fb *frameBuilder) tcp6(opts []byte) []byte {
	f := fb.tcp4(opts, 0, 0)
	tcp := f[14+20:]
	ip6 := make([]byte, 40)
	ip6[0] = 0x60
	binary.BigEndian.PutUint16(ip6[4:], uint16(len(tcp)))
	ip6[6], ip6[7] = 6, 64
	copy(ip6[8:], net.ParseIP("fd00::1"))
	copy(ip6[24:], net.ParseIP("fd00::2"))
	return fb.eth(0x86DD, append(ip6, tcp...))
}

// intOpt is our option with the given length, header byte and records.
func intOpt(length int, hdr byte) []byte {
	o := make([]byte, length)
	o[0], o[1], o[2], o[3] = 253, byte(length), 0xCC, 0x1A
	if length > 4 {
		o[4] = hdr
	}
	return o
}

// pad4 pads an option area with leading NOPs to a multiple of 4.
func pad4(o []byte) []byte {
	for len(o)%4 != 0 {
		o = append([]byte{1}, o...)
	}
	return o
}

// TestPassThrough injects, from a switch's namespace out of its port,
// frames the switch must not touch (byte-compared on arrival) and, as
// controls, frames it must stamp (only the option and TCP checksum change).
func TestPassThrough(t *testing.T) { eachMode(t, testPassThrough) }

func testPassThrough(t *testing.T, mode AttachMode) {
	l := newLine(t, 1, linkOpts{rate: units.Rate(1e9), buffer: 256 << 10})
	l.mode = mode
	capt := l.mirrorCapture("rcv", l.rcvIface())
	sw := attach(t, l.cfg())

	var fb frameBuilder
	var fd, ifindex int
	if err := nsexec.Do(l.ns("rcv"), func() error {
		ifc, err := net.InterfaceByName(l.rcvIface())
		fb.dst = ifc.HardwareAddr
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := nsexec.Do(l.ns("s1"), func() error {
		ifc, err := net.InterfaceByName("r1")
		if err != nil {
			return err
		}
		fb.src, ifindex = ifc.HardwareAddr, ifc.Index
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)

	foreign := []byte{253, 12, 0xBE, 0xEF, 0, 1, 2, 3, 4, 5, 6, 7}
	untouched := map[string][]byte{
		"no option":          fb.tcp4([]byte{2, 4, 0x05, 0xb4}, 0, 0),
		"foreign ExID":       fb.tcp4(foreign, 0, 0),
		"kind 254, our ExID": fb.tcp4(func() []byte { o := intOpt(12, 0); o[0] = 254; return o }(), 0, 0),
		"length 13":          fb.tcp4(pad4(intOpt(13, 0)), 0, 0),
		"length 4":           fb.tcp4(intOpt(4, 0), 0, 0),
		"option past header": fb.tcp4(append(intOpt(12, 0)[:2:2], 0xCC, 0x1A, 0, 0, 0, 0), 0, 0), // len 12 in 8 bytes
		"forged hop count":   fb.tcp4(pad4(intOpt(26, 4)), 0, 0),
		"version 2":          fb.tcp4(intOpt(12, 0x80), 0, 0),
		"version 3":          fb.tcp4(intOpt(12, 0xc0), 0, 0),
		"echo":               fb.tcp4(intOpt(12, 0x20), 0, 0),
		"full, overflowed":   fb.tcp4(pad4(intOpt(19, 0x12)), 0, 0),
		"after bad option":   fb.tcp4(append([]byte{8, 1, 1, 1}, intOpt(12, 0)...), 0, 0),
		"after EOL":          fb.tcp4(append([]byte{0, 1, 1, 1}, intOpt(12, 0)...), 0, 0),
		"IP fragment":        fb.tcp4(intOpt(12, 0), 0, 0x2000),
		"IP later fragment":  fb.tcp4(intOpt(12, 0), 0, 0x0010),
		"doff 4":             fb.tcp4(intOpt(12, 0), 4, 0),
		"doff past packet":   fb.tcp4(intOpt(12, 0), 15, 0),
		"UDP":                fb.udp4(append(intOpt(40, 0), 0)),
		"IPv6 TCP":           fb.tcp6(intOpt(40, 0)),
		"ARP-sized junk":     fb.eth(0x0806, append(make([]byte, 28), fb.marker()...)),
	}
	stamped := map[string][]byte{
		"5 free slots":         fb.tcp4(intOpt(40, 0), 0, 0),
		"odd offset, 1 slot":   fb.tcp4(pad4(intOpt(12, 0)), 0, 0),
		"full: overflow only":  fb.tcp4(pad4(intOpt(19, 0x02)), 0, 0),
		"after foreign option": fb.tcp4(append(append([]byte{}, foreign...), intOpt(12, 0)...), 0, 0),
		"v1 with U, 1 slot":    fb.tcp4(pad4(intOpt(12, 0x48)), 0, 0), // TCD off here: v1 and U kept
	}
	send := func(f []byte) {
		sa := &unix.SockaddrLinklayer{Ifindex: ifindex, Halen: 6}
		copy(sa.Addr[:], fb.dst)
		if err := unix.Sendto(fd, f, 0, sa); err != nil {
			t.Fatalf("inject: %v", err)
		}
	}
	for _, f := range untouched {
		send(f)
	}
	for _, f := range stamped {
		send(f)
	}
	want := len(untouched) + len(stamped)
	got := capt.waitFor(2*time.Second, func(fs [][]byte) bool { return len(byMarker(fs)) >= want })
	arrived := byMarker(got)

	for name, f := range untouched {
		a, ok := arrived[string(f[len(f)-8:])]
		if !ok {
			t.Errorf("%s: never arrived", name)
			continue
		}
		if !bytes.Equal(a, f) {
			t.Errorf("%s: changed in transit\nsent %x\ngot  %x", name, f, a)
		}
	}
	for name, f := range stamped {
		a, ok := arrived[string(f[len(f)-8:])]
		if !ok {
			t.Errorf("%s: never arrived", name)
			continue
		}
		sent, _ := parseTCP(f)
		got, ok := parseTCP(a)
		if !ok || len(a) != len(f) || !got.checksumsOK() {
			t.Errorf("%s: arrived broken (checksums ok: %v)", name, ok && got.checksumsOK())
			continue
		}
		// Only the option area and the TCP checksum may differ.
		optStart, optEnd := sent.tcpOff+20, sent.tcpOff+sent.tcpHLen
		for i := range f {
			inOpt := i >= optStart && i < optEnd
			inCsum := i == sent.tcpOff+16 || i == sent.tcpOff+17
			if f[i] != a[i] && !inOpt && !inCsum {
				t.Errorf("%s: byte %d changed outside the option", name, i)
			}
		}
		so, _ := findOpt(sent.options())
		o, _ := findOpt(got.options())
		switch {
		case so.hops() == so.slots:
			if o.hdr != so.hdr|0x10 || !bytes.Equal(got.options()[:], optWithHdr(sent.options(), o.hdr)) {
				t.Errorf("%s: want only the overflow flag set, got header %#x", name, o.hdr)
			}
		default:
			if o.hops() != 1 || o.recs[0].rate != 8 || o.overflow() || o.version() != so.version() || o.ue() != so.ue() {
				t.Errorf("%s: want one record (rate code 8), version and U kept, got header %#x record %+v", name, o.hdr, o.recs[0])
			}
		}
	}
	st, err := sw.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if p := portStats(t, st, "s1", "r1"); p.Stamped != 4 || p.Overflowed != 1 || p.UEMarked != 0 {
		t.Errorf("port counters: stamped %d overflowed %d U %d, want 4, 1 and 0", p.Stamped, p.Overflowed, p.UEMarked)
	}
}

// optWithHdr is the option area with our option's header byte replaced.
func optWithHdr(opts []byte, hdr byte) []byte {
	out := append([]byte(nil), opts...)
	for i := 0; i+4 < len(out); i++ {
		if out[i] == 253 && out[i+2] == 0xCC && out[i+3] == 0x1A {
			out[i+4] = hdr
			break
		}
	}
	return out
}

// byMarker indexes captured frames by their last 8 bytes.
func byMarker(fs [][]byte) map[string][]byte {
	m := map[string][]byte{}
	for _, f := range fs {
		if len(f) >= 8 && bytes.HasPrefix(f[len(f)-8:], []byte("ccpt")) {
			m[string(f[len(f)-8:])] = f
		}
	}
	return m
}
