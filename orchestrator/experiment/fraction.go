package experiment

import (
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Fraction is a share in [0,1], written "30%" or 0.3.
type Fraction float64

// UnmarshalYAML accepts "30%" or a plain number in [0,1].
func (f *Fraction) UnmarshalYAML(n *yaml.Node) error {
	s := strings.TrimSpace(n.Value)
	if n.Kind != yaml.ScalarNode || s == "" {
		return typeErr(n, "expected a fraction such as \"30%%\" or 0.3")
	}
	div := 1.0
	if strings.HasSuffix(s, "%") {
		s, div = strings.TrimSpace(strings.TrimSuffix(s, "%")), 100
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return typeErr(n, "%q is not a fraction (write e.g. \"30%%\" or 0.3)", n.Value)
	}
	v /= div
	if v < 0 || v > 1 || math.IsNaN(v) {
		return typeErr(n, "%q is outside 0-100%%", n.Value)
	}
	*f = Fraction(v)
	return nil
}
