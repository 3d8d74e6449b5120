package pcapflows

import "net/netip"

// tracker assigns segments to connections. Finished connections stay in
// conns (their results are small); only the live table is a map.
type tracker struct {
	live    map[flowKey]*conn
	conns   []*conn
	observe func(*Packet)
	pkt     Packet
	lastKey flowKey
	last    *conn
}

func newTracker(observe func(*Packet)) *tracker {
	return &tracker{live: make(map[flowKey]*conn), observe: observe}
}

func (t *tracker) add(s *segment, ts int64, wireLen int) {
	k, fromA := keyOf(s)
	c := t.last
	if c == nil || k != t.lastKey {
		c = t.live[k]
	}
	if c != nil && c.isNewConnection(s, fromA) {
		c = nil // port reuse: a SYN with a new ISN opens a new connection
	}
	if c == nil {
		c = &conn{id: len(t.conns), first: ts}
		if s.v6 {
			c.aAddr = netip.AddrPortFrom(netip.AddrFrom16(k.a), k.pa)
			c.bAddr = netip.AddrPortFrom(netip.AddrFrom16(k.b), k.pb)
		} else {
			c.aAddr = netip.AddrPortFrom(netip.AddrFrom4([4]byte(k.a[:4])), k.pa)
			c.bAddr = netip.AddrPortFrom(netip.AddrFrom4([4]byte(k.b[:4])), k.pb)
		}
		// Until a SYN says otherwise, the first packet's sender is the client.
		c.aIsClient = fromA
		t.conns = append(t.conns, c)
		t.live[k] = c
	}
	t.lastKey, t.last = k, c
	c.last = ts

	if s.flags&flagSYN != 0 {
		isClient := s.flags&flagACK == 0
		if !c.clientKnown {
			c.clientKnown = true
			c.aIsClient = fromA == isClient
		}
		if isClient && c.synTime == 0 {
			c.synTime = ts
		}
	}
	if s.flags&flagRST != 0 {
		c.rst = true
	}
	own, peer := &c.dir[0], &c.dir[1]
	if !fromA {
		own, peer = peer, own
	}
	newBytes := own.sent(s, ts)
	if s.flags&flagACK != 0 {
		peer.acked(s.ack, ts)
	}
	if t.observe != nil {
		p := &t.pkt
		p.Time, p.Flow = ts, c.id
		p.FromClient = fromA == c.aIsClient
		p.Src, p.Dst = s.srcAddr(), s.dstAddr()
		p.WireLen, p.PayloadLen, p.NewBytes, p.Options = wireLen, s.payloadLen, newBytes, s.options
		t.observe(p)
	}
}

func (t *tracker) results() []Flow {
	out := make([]Flow, len(t.conns))
	for i, c := range t.conns {
		out[i] = c.result()
	}
	return out
}
