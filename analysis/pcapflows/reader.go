// Package pcapflows turns a packet capture into TCP flows in one streaming
// pass: memory grows with the number of flows, not packets. analysis/README.md
// defines exactly what a flow, its FCT, bytes and retransmissions are.
package pcapflows

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/pcapgo"
)

// Packet is one TCP segment handed to an Observer. It is reused: copy what
// you keep.
type Packet struct {
	Time       int64 // ns on the capture clock
	Flow       int   // index into Capture.Flows
	FromClient bool
	Src, Dst   netip.Addr
	WireLen    int    // bytes on the wire (original length)
	PayloadLen uint32 // TCP payload bytes
	NewBytes   uint32 // payload bytes this flow never sent before, in this direction
	Options    []byte // TCP options as captured; valid only during the call
}

// Options tune a read. The zero value reads silently.
type Options struct {
	// Observe, when set, is called for every TCP segment in file order.
	Observe func(*Packet)
	// Progress, when set, is called every ProgressEvery packets with the
	// packets and bytes read so far.
	Progress      func(packets uint64, offset int64)
	ProgressEvery uint64
}

// Capture is the result of reading a whole capture file.
type Capture struct {
	Format     string `json:"format"` // pcap or pcapng
	LinkType   uint32 `json:"link_type"`
	Snaplen    uint32 `json:"snaplen"`
	Packets    uint64 `json:"packets"`
	TCPPackets uint64 `json:"tcp_packets"`
	Skipped    uint64 `json:"skipped"` // not TCP, or headers not captured whole
	WireBytes  uint64 `json:"wire_bytes"`
	FileBytes  int64  `json:"file_bytes"`
	First      int64  `json:"first_ns"`
	Last       int64  `json:"last_ns"`
	Flows      []Flow `json:"flows"`
	// Cut is set when the file could not be read to its end (a run
	// interrupted mid-write, a full disk, a damaged record): everything
	// above covers the packets before the damage.
	Cut *Cut `json:"cut,omitempty"`
}

// Cut is where a capture stops being readable. Offset is the byte where
// the bad record starts: the pcap record, or the pcapng block the failed
// read was in (the next packet block, or a block before it with an
// impossible length). Exact is false only where a pcapng walk to that
// block would have looked past the 64 KB read buffer; Offset is then how
// far the file had been read.
type Cut struct {
	Offset  int64  `json:"offset"`
	Exact   bool   `json:"exact"`
	Packets uint64 `json:"packets"` // packets read before it
	Reason  string `json:"reason"`
}

func (c *Cut) String() string {
	return fmt.Sprintf("cut %s (%s): %d packets read before it", offsetPhrase(c.Offset, c.Exact), c.Reason, c.Packets)
}

func offsetPhrase(off int64, exact bool) string {
	if exact {
		return fmt.Sprintf("at byte offset %d", off)
	}
	return fmt.Sprintf("with the file read to byte offset %d", off)
}

// FormatError is a capture whose file header cannot be read, so that
// nothing in it can be: Offset is where the header failed (Exact as in
// Cut).
type FormatError struct {
	Offset int64
	Exact  bool
	Err    error
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("file header %s: %v", offsetPhrase(e.Offset, e.Exact), e.Err)
}

func (e *FormatError) Unwrap() error { return e.Err }

// ReadFile reads a pcap or pcapng file.
func ReadFile(ctx context.Context, path string, opt Options) (*Capture, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, err := Read(ctx, f, opt)
	if err != nil {
		return nil, fmt.Errorf("capture %s: %w", path, err)
	}
	return c, nil
}

type packetSource interface {
	ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error)
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

const (
	pcapngMagic  = 0x0a0d0d0a
	pcapHeader   = 24
	recordHeader = 16
)

// Read reads a capture from r. A capture whose records end in damage (cut
// mid-record, or a record or block that cannot be one) is read up to it:
// the result covers the packets before, and Cut says where and why.
// Flows open at the damage are incomplete, as at a capture's end. A file
// without a readable header is an error, with a nil result.
func Read(ctx context.Context, r io.Reader, opt Options) (*Capture, error) {
	cr := &countingReader{r: r}
	br := bufio.NewReaderSize(cr, 64<<10)
	magic, err := br.Peek(4)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("empty or truncated file header (%d bytes): %w", len(magic), io.ErrUnexpectedEOF)
		}
		return nil, err
	}
	c := &Capture{}
	var src packetSource
	var ng *ngLocator
	if binary.LittleEndian.Uint32(magic) == pcapngMagic {
		ng = newNgLocator(br)
		nr, err := pcapgo.NewNgReader(br, pcapgo.DefaultNgReaderOptions)
		if err != nil {
			return nil, &FormatError{Offset: cr.n - int64(br.Buffered()), Err: fmt.Errorf("pcapng section header: %w", err)}
		}
		c.Format, c.LinkType, src = "pcapng", uint32(nr.LinkType()), nr
		if iface, err := nr.Interface(0); err == nil {
			c.Snaplen = iface.SnapLength
		}
	} else {
		pr, err := pcapgo.NewReader(br)
		if err != nil {
			return nil, &FormatError{Offset: 0, Exact: true, Err: fmt.Errorf("not a pcap or pcapng file: %w", err)}
		}
		c.Format, c.LinkType, c.Snaplen, src = "pcap", uint32(pr.LinkType()), pr.Snaplen(), pr
	}
	if !supportedLink(c.LinkType) {
		return nil, fmt.Errorf("link type %d is not supported (Ethernet, Linux cooked, raw IP, loopback are)", c.LinkType)
	}

	t := newTracker(opt.Observe)
	offset := int64(pcapHeader) // start of the next record (pcap)
	every := opt.ProgressEvery
	if every == 0 {
		every = 1 << 20
	}
	var seg segment
	exact := true
	for {
		if ng != nil {
			offset, exact = ng.next(cr.n - int64(br.Buffered()))
		}
		data, ci, err := src.ZeroCopyReadPacketData()
		if err != nil {
			if err == io.EOF {
				break
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				err = fmt.Errorf("truncated record: %w", err)
			}
			c.Cut = &Cut{Offset: offset, Exact: exact, Packets: c.Packets, Reason: err.Error()}
			if !exact {
				c.Cut.Offset = cr.n
			}
			break
		}
		c.Packets++
		offset += recordHeader + int64(len(data))
		ts := ci.Timestamp.UnixNano()
		if c.First == 0 || ts < c.First {
			c.First = ts
		}
		if ts > c.Last {
			c.Last = ts
		}
		c.WireBytes += uint64(ci.Length)
		if !decode(c.LinkType, data, &seg) {
			c.Skipped++
		} else {
			c.TCPPackets++
			t.add(&seg, ts, ci.Length)
		}
		if c.Packets%every == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if opt.Progress != nil {
				opt.Progress(c.Packets, cr.n-int64(br.Buffered()))
			}
		}
	}
	c.FileBytes = cr.n
	c.Flows = t.results()
	return c, nil
}
