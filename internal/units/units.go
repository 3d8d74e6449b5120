// Package units parses the quantities that topology and experiment files
// carry: link rates, byte sizes and durations. Every quantity must name its
// unit; a bare number is an error (is "1000" bytes, bits or packets?).
//
// Rates are in bits per second: "100Mbit", "1Gbit", "10Gbps", "1Gbit/s";
// K/M/G/T are decimal (1 Gbit = 10^9 bit/s), as link speeds are.
// Sizes are in bytes: "1500B", "64KB", "1MB" are decimal, "64KiB", "1MiB"
// binary; "1 pkt" is not a size.
// Durations are Go durations ("20us", "1.5ms", "2s"); "0" is allowed.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Rate is a link or sending rate in bits per second.
type Rate uint64

// Size is an amount of data in bytes.
type Size uint64

// Duration is a time.Duration that parses from YAML with a unit.
type Duration time.Duration

var rateUnits = map[string]float64{
	"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12,
	"bps": 1, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "tbps": 1e12,
}

var sizeUnits = map[string]float64{
	"b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30,
}

// splitNumber splits "1.5Gbit" into 1.5 and "gbit".
func splitNumber(s string) (float64, string, error) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool {
		return !(unicode.IsDigit(r) || r == '.')
	})
	if i == 0 {
		return 0, "", fmt.Errorf("%q does not start with a number", s)
	}
	if i < 0 {
		i = len(s)
	}
	v, err := strconv.ParseFloat(s[:i], 64)
	if err != nil {
		return 0, "", fmt.Errorf("%q: bad number: %w", s, err)
	}
	unit := strings.ToLower(strings.TrimSpace(s[i:]))
	return v, unit, nil
}

func scale(s string, v float64, unit string, table map[string]float64, kind, examples string) (uint64, error) {
	if unit == "" {
		return 0, fmt.Errorf("%s %q has no unit (write e.g. %s)", kind, s, examples)
	}
	mul, ok := table[unit]
	if !ok {
		return 0, fmt.Errorf("%s %q: unknown unit %q (write e.g. %s)", kind, s, unit, examples)
	}
	x := v * mul
	if x > math.MaxUint64/2 || math.IsNaN(x) {
		return 0, fmt.Errorf("%s %q is out of range", kind, s)
	}
	return uint64(math.Round(x)), nil
}

// ParseRate parses a rate such as "1Gbit" or "100Mbps" into bits per second.
func ParseRate(s string) (Rate, error) {
	v, unit, err := splitNumber(s)
	if err != nil {
		return 0, fmt.Errorf("rate: %w", err)
	}
	unit = strings.TrimSuffix(unit, "/s")
	r, err := scale(s, v, unit, rateUnits, "rate", `"1Gbit" or "100Mbit"`)
	return Rate(r), err
}

// ParseSize parses a size such as "64KB" or "1MiB" into bytes.
func ParseSize(s string) (Size, error) {
	v, unit, err := splitNumber(s)
	if err != nil {
		return 0, fmt.Errorf("size: %w", err)
	}
	n, err := scale(s, v, unit, sizeUnits, "size", `"1500B", "64KB" or "1MiB"`)
	return Size(n), err
}

// ParseDuration parses a Go duration; a bare "0" means zero.
func ParseDuration(s string) (Duration, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: write e.g. \"20us\", \"1ms\" or \"2s\"", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q is negative", s)
	}
	return Duration(d), nil
}

// BitsPerSecond returns the rate as a plain number.
func (r Rate) BitsPerSecond() uint64 { return uint64(r) }

// BytesPerSecond returns the rate in bytes per second.
func (r Rate) BytesPerSecond() uint64 { return uint64(r) / 8 }

func (r Rate) String() string {
	switch {
	case r >= 1e9 && r%1e9 == 0:
		return fmt.Sprintf("%dGbit", uint64(r)/1e9)
	case r >= 1e6 && r%1e6 == 0:
		return fmt.Sprintf("%dMbit", uint64(r)/1e6)
	case r >= 1e3 && r%1e3 == 0:
		return fmt.Sprintf("%dKbit", uint64(r)/1e3)
	}
	return fmt.Sprintf("%dbit", uint64(r))
}

func (s Size) String() string {
	switch {
	case s >= 1e9 && s%1e9 == 0:
		return fmt.Sprintf("%dGB", uint64(s)/1e9)
	case s >= 1e6 && s%1e6 == 0:
		return fmt.Sprintf("%dMB", uint64(s)/1e6)
	case s >= 1e3 && s%1e3 == 0:
		return fmt.Sprintf("%dKB", uint64(s)/1e3)
	}
	return fmt.Sprintf("%dB", uint64(s))
}

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }
