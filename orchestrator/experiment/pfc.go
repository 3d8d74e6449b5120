package experiment

import (
	"strings"

	"gopkg.in/yaml.v3"

	"cclab/internal/units"
	"cclab/topology"
)

// PFC makes the fabric lossless (docs/lossless.md): every switch counts
// its ingress queues and pauses a port's upstream above Xoff, resumes it
// at Xon. Lossy (no pfc) is the default.
//
//	switch: {pfc: {mode: static, xoff: 30KB, xon: 27KB, headroom: auto}}
//	switch: {pfc: {mode: dynamic, alpha: 0.11, buffer: 32MB, headroom: auto}}
//
// A lossless run needs the topology's links to hold their own delay
// (`delay: {placement: link}`): the runner checks that before building.
type PFC struct {
	// Mode is "static" (xoff, xon in bytes of one ingress queue) or
	// "dynamic" (HPCC's: pause above alpha of the free shared buffer).
	Mode string     `yaml:"mode" json:"mode"`
	Xoff units.Size `yaml:"xoff" json:"xoff,omitempty"`
	// Xon defaults to Xoff minus DefaultPFCHysteresis.
	Xon   units.Size `yaml:"xon" json:"xon,omitempty"`
	Alpha Fraction   `yaml:"alpha" json:"alpha,omitempty"`
	// Hysteresis is dynamic mode's Xoff - Xon (default
	// DefaultPFCHysteresis).
	Hysteresis units.Size `yaml:"hysteresis" json:"hysteresis,omitempty"`
	// Headroom is "auto" (2 x link delay x rate + 2 MTU, per port) or
	// bytes.
	Headroom Headroom `yaml:"headroom" json:"headroom"`
	// Buffer is each switch's shared buffer B: every switch port's FIFO
	// holds up to B, so that only PFC bounds its queue. Dynamic mode
	// needs it (its threshold is a share of B's free part); static mode
	// without it keeps each port's own buffer from the topology.
	Buffer units.Size      `yaml:"buffer" json:"buffer,omitempty"`
	Line   int             `yaml:"-" json:"-"`
	set    map[string]bool // the fields the file gives
}

// The PFC modes.
const (
	PFCStatic  = "static"
	PFCDynamic = "dynamic"
)

// DefaultPFCAlpha is HPCC's dynamic threshold: "PFC is triggered when an
// ingress queue consumes more than 11% of the free buffer".
const DefaultPFCAlpha = Fraction(0.11)

// DefaultPFCHysteresis is Xoff - Xon when the file does not say: two
// full-size frames ("a few MTUs", docs/lossless.md).
const DefaultPFCHysteresis = units.Size(2 * 1514)

// Headroom is a port's room above Xoff: Auto (computed per port from its
// link) or Bytes.
type Headroom struct {
	Auto  bool       `json:"auto,omitempty"`
	Bytes units.Size `json:"bytes,omitempty"`
}

// UnmarshalYAML accepts "auto" or a size.
func (h *Headroom) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && strings.TrimSpace(n.Value) == "auto" {
		*h = Headroom{Auto: true}
		return nil
	}
	var b units.Size
	if err := n.Decode(&b); err != nil {
		return typeErr(n, "headroom %q: give auto or a size such as 30KB", n.Value)
	}
	*h = Headroom{Bytes: b}
	return nil
}

// UnmarshalYAML: decodeNoted (what is left out takes defaults).
func (f *PFC) UnmarshalYAML(n *yaml.Node) error {
	type plain PFC
	return decodeNoted(n, (*plain)(f), &f.Line, &f.set)
}

// validate checks the section and fills its defaults.
func (f *PFC) validate(p *problems) {
	if f == nil {
		return
	}
	switch f.Mode {
	case PFCStatic:
		if f.set["alpha"] || f.set["hysteresis"] {
			p.add(f.Line, "switch pfc: alpha and hysteresis are dynamic mode's; static takes xoff and xon")
		}
		if f.Xoff == 0 {
			p.add(f.Line, "switch pfc: static mode needs xoff, the ingress queue that pauses its upstream")
		}
		if !f.set["xon"] && f.Xoff > DefaultPFCHysteresis {
			f.Xon = f.Xoff - DefaultPFCHysteresis
		}
		if f.Xoff != 0 && f.Xon >= f.Xoff {
			p.add(f.Line, "switch pfc: xon %v must be below xoff %v", f.Xon, f.Xoff)
		}
	case PFCDynamic:
		if f.set["xoff"] || f.set["xon"] {
			p.add(f.Line, "switch pfc: xoff and xon are static mode's; dynamic takes alpha (and hysteresis)")
		}
		if !f.set["alpha"] {
			f.Alpha = DefaultPFCAlpha
		}
		if f.Alpha <= 0 {
			p.add(f.Line, "switch pfc: alpha must be above 0 (HPCC's: 11%%)")
		}
		if !f.set["hysteresis"] {
			f.Hysteresis = DefaultPFCHysteresis
		}
		if f.Buffer == 0 {
			p.add(f.Line, "switch pfc: dynamic mode needs buffer, the switch's shared buffer its threshold is a share of (HPCC's: 32MB)")
		}
	default:
		p.add(f.Line, "switch pfc: mode %q: give static or dynamic", f.Mode)
	}
	if !f.set["headroom"] {
		f.Headroom = Headroom{Auto: true}
	}
	if !f.Headroom.Auto && f.Headroom.Bytes == 0 {
		p.add(f.Line, "switch pfc: headroom 0B: give auto or the bytes a port takes above xoff")
	}
	if f.Buffer > topology.MaxBuffer {
		p.add(f.Line, "switch pfc: buffer %v is above the largest port buffer %v", f.Buffer, topology.MaxBuffer)
	}
}
