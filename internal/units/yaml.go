package units

import (
	"encoding/json"
	"fmt"

	"gopkg.in/yaml.v3"
)

// The YAML unmarshalers report the line and column of a bad value, so that
// a user sees "topologies/x.yaml:12:11: rate "1000" has no unit". The error
// is a yaml.TypeError: yaml.v3 then goes on decoding and reports every bad
// value of the file, not only the first.

func lineErr(n *yaml.Node, err error) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d:%d: %v", n.Line, n.Column, err)}}
}

func scalar(n *yaml.Node) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", lineErr(n, fmt.Errorf("expected a value with a unit, got a %s", kindName(n.Kind)))
	}
	return n.Value, nil
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	}
	return "non-scalar"
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (r *Rate) UnmarshalYAML(n *yaml.Node) error {
	s, err := scalar(n)
	if err != nil {
		return err
	}
	v, err := ParseRate(s)
	if err != nil {
		return lineErr(n, err)
	}
	*r = v
	return nil
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (sz *Size) UnmarshalYAML(n *yaml.Node) error {
	s, err := scalar(n)
	if err != nil {
		return err
	}
	v, err := ParseSize(s)
	if err != nil {
		return lineErr(n, err)
	}
	*sz = v
	return nil
}

// UnmarshalYAML implements yaml.Unmarshaler.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	s, err := scalar(n)
	if err != nil {
		return err
	}
	v, err := ParseDuration(s)
	if err != nil {
		return lineErr(n, err)
	}
	*d = v
	return nil
}

// MarshalYAML writes the quantity back with its unit.
func (r Rate) MarshalYAML() (any, error) { return r.String(), nil }

// MarshalYAML writes the quantity back with its unit.
func (sz Size) MarshalYAML() (any, error) { return sz.String(), nil }

// MarshalYAML writes the quantity back with its unit.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// MarshalJSON writes plain numbers (bit/s, bytes, ns) so that run.json is
// easy to read by programs.
func (r Rate) MarshalJSON() ([]byte, error) { return json.Marshal(uint64(r)) }

// MarshalJSON writes plain numbers (bytes).
func (sz Size) MarshalJSON() ([]byte, error) { return json.Marshal(uint64(sz)) }

// MarshalJSON writes nanoseconds.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(int64(d)) }
