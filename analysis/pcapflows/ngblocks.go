package pcapflows

import (
	"bufio"
	"encoding/binary"
)

// pcapng block types (pcapng draft, section 4) that the walk needs.
const (
	ngSectionHeader  = 0x0a0d0d0a
	ngPacketObsolete = 0x00000002
	ngSimplePacket   = 0x00000003
	ngEnhancedPacket = 0x00000006
	ngByteOrderMagic = 0x1a2b3c4d
	ngBlockMin       = 12 // type, total length, trailing total length
)

// ngLocator finds where the pcapng reader's next packet block starts, by
// peeking at the block headers ahead in the same bufio.Reader the reader
// consumes from (pcapgo's NgReader takes a large enough *bufio.Reader as
// its own, so what it has consumed is exactly pos). A read that then
// fails failed in that block: the error names its first byte, not how far
// the buffered reader had got.
type ngLocator struct {
	br    *bufio.Reader
	order binary.ByteOrder
}

// newNgLocator reads the byte order of the first section header.
func newNgLocator(br *bufio.Reader) *ngLocator {
	l := &ngLocator{br: br, order: binary.LittleEndian}
	if b, err := br.Peek(12); err == nil && binary.BigEndian.Uint32(b[8:]) == ngByteOrderMagic {
		l.order = binary.BigEndian
	}
	return l
}

// next returns the offset of the block the next packet read will end in,
// given that the reader has consumed pos bytes: the next packet block, or
// a block before it whose length is impossible. ok is false when the walk
// would have to look further than the buffer holds (the caller then
// names how far the file was read).
func (l *ngLocator) next(pos int64) (off int64, ok bool) {
	ahead := 0
	for {
		hdr, err := l.br.Peek(ahead + 12)
		if err == bufio.ErrBufferFull {
			return 0, false
		}
		if err != nil {
			// Fewer bytes left than a block header: the read fails here.
			return pos + int64(ahead), true
		}
		h := hdr[ahead:]
		typ := l.order.Uint32(h)
		if typ == ngSectionHeader {
			// A new section may switch byte order (its magic is
			// after the length, in the section's own order).
			switch binary.LittleEndian.Uint32(h[8:]) {
			case ngByteOrderMagic:
				l.order = binary.LittleEndian
			case 0x4d3c2b1a:
				l.order = binary.BigEndian
			}
		}
		n := int64(l.order.Uint32(h[4:]))
		if typ == ngPacketObsolete || typ == ngSimplePacket || typ == ngEnhancedPacket ||
			n < ngBlockMin || n%4 != 0 {
			return pos + int64(ahead), true
		}
		if int64(ahead)+n > int64(l.br.Size()) {
			return 0, false
		}
		if _, err := l.br.Peek(ahead + int(n)); err != nil {
			return pos + int64(ahead), true // this block is cut short
		}
		ahead += int(n)
	}
}
