package topology

import "fmt"

// The placements of the links' propagation delay (orchestrator/delay).
const (
	// PlacePath holds each path's whole one-way delay at the switch port
	// that faces its destination host, before that port's queue.
	PlacePath = "path"
	// PlaceLink holds each link direction's delay at its receiving
	// interface (switch port or host), so the bytes in the delay line
	// are the bytes on that wire.
	PlaceLink = "link"
)

// DelaySpec is a topology file's `delay:` section.
type DelaySpec struct {
	// Placement is path (the default) or link.
	Placement string `yaml:"placement"`
}

// parsePlacement reads a placement as a file writes it ("" is path).
func parsePlacement(s string) (string, error) {
	switch s {
	case "", PlacePath:
		return "", nil
	case PlaceLink:
		return PlaceLink, nil
	}
	return "", fmt.Errorf("delay placement %q: want %s or %s", s, PlacePath, PlaceLink)
}
