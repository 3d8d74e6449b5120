package health

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"time"

	"cclab/internal/nsexec"
	"cclab/orchestrator/flows"
)

// RTT is the round-trip time of a 1-byte TCP ping-pong between two hosts on
// an idle network, as an application sees it: the floor under every FCT.
type RTT struct {
	Src      string `json:"src"`
	Dst      string `json:"dst"`
	Samples  int    `json:"samples"`
	MinNs    int64  `json:"min_ns"`
	MedianNs int64  `json:"median_ns"`
	P99Ns    int64  `json:"p99_ns"`
}

// PingPong measures n round trips from a to b over TCP (Nagle off).
func PingPong(ctx context.Context, srcName string, a flows.Host, dstName string, b flows.Host, port uint16, n int) (*RTT, error) {
	ln, err := flows.Listen(b.Netns, b.Addr, port)
	if err != nil {
		return nil, fmt.Errorf("rtt: %w", err)
	}
	defer ln.Close()
	ln.SetDeadline(time.Now().Add(10 * time.Second))
	echoed := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			echoed <- err
			return
		}
		defer c.Close()
		_, err = io.Copy(c, c)
		echoed <- err
	}()
	var c net.Conn
	err = nsexec.Do(a.Netns, func() error {
		d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(a.Addr, 0))}
		var err error
		c, err = d.DialContext(ctx, "tcp4", netip.AddrPortFrom(b.Addr, port).String())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("rtt: dial %s: %w", b.Addr, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	c.(*net.TCPConn).SetNoDelay(true)
	one := []byte{1}
	var samples []int64
	for i := 0; i < n+10 && ctx.Err() == nil; i++ {
		t0 := flows.Monotonic()
		if _, err := c.Write(one); err != nil {
			return nil, fmt.Errorf("rtt: %w", err)
		}
		if _, err := io.ReadFull(c, one); err != nil {
			return nil, fmt.Errorf("rtt: %w", err)
		}
		if i >= 10 { // the first exchanges warm up caches and the window
			samples = append(samples, flows.Monotonic()-t0)
		}
	}
	if len(samples) == 0 {
		return nil, fmt.Errorf("rtt: %w", ctx.Err())
	}
	slices.Sort(samples)
	return &RTT{
		Src: srcName, Dst: dstName, Samples: len(samples),
		MinNs: samples[0], MedianNs: samples[len(samples)/2], P99Ns: samples[len(samples)*99/100],
	}, nil
}
