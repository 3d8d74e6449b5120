package tcopt

import (
	"errors"
	"fmt"
)

// Option is one INT option: its header and the records written so far.
type Option struct {
	Version      uint8    // header version: Version (0) or V1
	Echo         bool     // E: an ACK's echo of forward records
	Overflow     bool     // O: a switch found no free slot
	Undetermined bool     // U (v1 only): a port on the path was in TCD's undetermined state
	Slots        int      // record slots the option has room for (0..MaxHops)
	Records      []Record // len = hop count, at most Slots
}

// Errors of Parse, for errors.Is.
var (
	ErrTruncated = errors.New("truncated")
	ErrNotINT    = errors.New("not an INT option") // kind or ExID
	ErrLength    = errors.New("bad INT option length")
	ErrVersion   = errors.New("unknown INT option version")
	ErrHops      = errors.New("hop count beyond slots")
)

// Len is the option's length on the wire (the len byte).
func (o Option) Len() int { return BaseLen + o.Slots*RecLen }

// Append encodes the option onto b. Unused slots are zero.
func (o Option) Append(b []byte) ([]byte, error) {
	if o.Slots < 0 || o.Slots > MaxHops {
		return b, fmt.Errorf("encode INT option: %d slots (0..%d): %w", o.Slots, MaxHops, ErrLength)
	}
	if len(o.Records) > o.Slots {
		return b, fmt.Errorf("encode INT option: %d records in %d slots: %w", len(o.Records), o.Slots, ErrHops)
	}
	hdr, err := o.header()
	if err != nil {
		return b, err
	}
	n := len(b)
	b = append(b, make([]byte, o.Len())...)
	p := b[n:]
	p[0], p[1], p[2], p[3], p[4] = Kind, byte(o.Len()), ExID>>8, ExID&0xff, hdr
	for i, r := range o.Records {
		r.put(p[BaseLen+i*RecLen:])
	}
	return b, nil
}

// header is the option's header byte in its version.
func (o Option) header() (byte, error) {
	var hdr byte
	switch o.Version {
	case Version:
		if o.Undetermined {
			return 0, fmt.Errorf("encode INT option: U in a version 0 header: %w", ErrVersion)
		}
		hdr = Version<<6 | byte(len(o.Records))
	case V1:
		hdr = V1<<6 | byte(len(o.Records))
		if o.Undetermined {
			hdr |= HdrUE
		}
	default:
		return 0, fmt.Errorf("encode INT option: version %d: %w", o.Version, ErrVersion)
	}
	if o.Echo {
		hdr |= HdrEcho
	}
	if o.Overflow {
		hdr |= HdrOvfl
	}
	return hdr, nil
}

// headerHops splits a header byte's version-dependent part: the hop count
// and U, ok=false for an unknown version.
func headerHops(hdr byte) (hops int, ue bool, ok bool) {
	switch hdr >> 6 {
	case Version:
		return int(hdr & HopsMask), false, true
	case V1:
		return int(hdr & HopsMaskV1), hdr&HdrUE != 0, true
	}
	return 0, false, false
}

// Marshal encodes the option.
func (o Option) Marshal() ([]byte, error) { return o.Append(nil) }

// Parse decodes the option at the start of b (b may continue past it).
// It reads header versions 0 and 1 and rejects the whole option, as every
// reader must, when the kind, ExID, length or version is wrong, when the hop count exceeds the slots, or when
// b ends before the option does. Records with a bad rate code are kept as
// they are on the wire; Hops drops them.
func Parse(b []byte) (Option, error) {
	if len(b) < 2 {
		return Option{}, fmt.Errorf("parse INT option: %d bytes: %w", len(b), ErrTruncated)
	}
	if b[0] != Kind {
		return Option{}, fmt.Errorf("parse INT option: kind %d: %w", b[0], ErrNotINT)
	}
	l := int(b[1])
	if l > len(b) {
		return Option{}, fmt.Errorf("parse INT option: length %d, %d bytes: %w", l, len(b), ErrTruncated)
	}
	if l >= 4 && (int(b[2])<<8|int(b[3])) != ExID {
		return Option{}, fmt.Errorf("parse INT option: ExID %#04x: %w", int(b[2])<<8|int(b[3]), ErrNotINT)
	}
	slots := SlotsOf(l)
	if slots < 0 {
		return Option{}, fmt.Errorf("parse INT option: length %d: %w", l, ErrLength)
	}
	hdr := b[4]
	hops, ue, ok := headerHops(hdr)
	if !ok {
		return Option{}, fmt.Errorf("parse INT option: version %d: %w", hdr>>6, ErrVersion)
	}
	if hops > slots {
		return Option{}, fmt.Errorf("parse INT option: %d hops in %d slots: %w", hops, slots, ErrHops)
	}
	o := Option{
		Version:      hdr >> 6,
		Echo:         hdr&HdrEcho != 0,
		Overflow:     hdr&HdrOvfl != 0,
		Undetermined: ue,
		Slots:        slots,
	}
	if hops > 0 {
		o.Records = make([]Record, hops)
		for i := range o.Records {
			o.Records[i] = getRecord(b[BaseLen+i*RecLen : BaseLen+(i+1)*RecLen])
		}
	}
	return o, nil
}

// Hops returns the valid records in plain units, in path order, dropping
// records a reader must ignore (as the host agent does).
func (o Option) Hops() []Hop {
	var hs []Hop
	for _, r := range o.Records {
		if h, ok := r.Hop(); ok {
			hs = append(hs, h)
		}
	}
	return hs
}

// Find looks for our option in a TCP options area (the bytes after the
// 20-byte TCP header). It returns the option's bytes, or nil when there is
// none or the options area is malformed before it is reached. Foreign
// experimental options (other ExIDs) are skipped.
func Find(opts []byte) []byte {
	for i := 0; i < len(opts); {
		switch opts[i] {
		case 0: // end of option list
			return nil
		case 1: // no-op
			i++
			continue
		}
		if i+1 >= len(opts) {
			return nil
		}
		l := int(opts[i+1])
		if l < 2 || i+l > len(opts) {
			return nil
		}
		if opts[i] == Kind && l >= 4 && int(opts[i+2])<<8|int(opts[i+3]) == ExID {
			return opts[i : i+l]
		}
		i += l
	}
	return nil
}
