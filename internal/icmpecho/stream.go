package icmpecho

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// Stream takes n RTT samples with the requests sent every interval, not
// one at a time: a path of RTT R costs n x interval + R instead of
// n x (R + gap), and an ICMP echo a few hundred bytes per millisecond
// apart changes no queue at the rates cclab shapes. Replies are matched by
// sequence number; one not back within timeout of its request is lost.
func (p *Pinger) Stream(ctx context.Context, n int, interval, timeout time.Duration) (RTT, error) {
	sent := make(map[uint16]int64, n)
	var samples []int64
	next := time.Now()
	last := time.Time{}
	buf := make([]byte, 1500)
	oob := make([]byte, 64)
	for i := 0; ctx.Err() == nil; {
		now := time.Now()
		if i < n && !now.Before(next) {
			at, err := p.send()
			if err != nil {
				return RTT{}, err
			}
			sent[p.seq] = at
			i++
			next = next.Add(interval)
			if i == n {
				last = time.Now()
			}
			continue
		}
		if i == n && (len(sent) == 0 || time.Since(last) > timeout) {
			break
		}
		wait := time.Until(next)
		if i == n {
			wait = timeout - time.Since(last)
		}
		// ppoll: a sub-millisecond wait must not become a busy loop
		// beside the load the echoes measure.
		pfd := []unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}}
		ts := unix.NsecToTimespec(int64(max(wait, 0)))
		if _, err := unix.Ppoll(pfd, &ts, nil); err != nil && err != unix.EINTR {
			return RTT{}, fmt.Errorf("ping %s: %w", p.dst, err)
		}
		for {
			k, oobn, _, _, err := unix.Recvmsg(p.fd, buf, oob, unix.MSG_DONTWAIT)
			if err == unix.EAGAIN || err == unix.EINTR {
				break
			}
			if err != nil {
				return RTT{}, fmt.Errorf("ping %s: %w", p.dst, err)
			}
			seq, ok := p.replySeq(buf[:k])
			at, pending := sent[seq]
			if !ok || !pending {
				continue
			}
			stamp := rxStamp(oob[:oobn])
			if stamp == 0 {
				stamp = realtime()
			}
			delete(sent, seq)
			if time.Duration(stamp-at) <= timeout {
				samples = append(samples, stamp-at)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return RTT{}, err
	}
	return Summarise(samples, n-len(samples)), nil
}

// send sends the next echo request (sequence number p.seq) and returns
// when.
func (p *Pinger) send() (int64, error) {
	p.seq++
	req := make([]byte, 16)
	req[0] = 8 // echo request
	binary.BigEndian.PutUint16(req[4:], p.id)
	binary.BigEndian.PutUint16(req[6:], p.seq)
	binary.BigEndian.PutUint16(req[2:], icmpChecksum(req))
	at := realtime()
	if err := unix.Sendto(p.fd, req, 0, &unix.SockaddrInet4{Addr: p.dst.As4()}); err != nil {
		return 0, fmt.Errorf("ping %s: %w", p.dst, err)
	}
	return at, nil
}

// replySeq returns the sequence number of an echo reply of this pinger
// (from dst, type 0, its id).
func (p *Pinger) replySeq(b []byte) (uint16, bool) {
	if len(b) < 20 || b[0]>>4 != 4 {
		return 0, false
	}
	hl := int(b[0]&0x0f) * 4
	if hl < 20 || len(b) < hl+8 || [4]byte(b[12:16]) != p.dst.As4() {
		return 0, false
	}
	icmp := b[hl:]
	if icmp[0] != 0 || binary.BigEndian.Uint16(icmp[4:]) != p.id {
		return 0, false
	}
	return binary.BigEndian.Uint16(icmp[6:]), true
}
