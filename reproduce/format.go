package reproduce

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// num prints a claim's number in its unit.
func num(x float64, unit string) string {
	switch {
	case math.IsInf(x, 1):
		return "never"
	case math.IsInf(x, -1):
		return "-inf"
	case math.IsNaN(x):
		return "n/a"
	}
	switch unit {
	case "KB":
		return strconv.FormatFloat(x/1e3, 'f', 1, 64) + " KB"
	case "ms":
		return duration(x)
	case "%":
		return fmt.Sprintf("%.0f %%", 100*x)
	case "x":
		return f2(x) + "x"
	case "":
		return f2(x)
	}
	return f2(x) + " " + unit
}

// duration prints nanoseconds in the unit that reads best.
func duration(ns float64) string {
	switch a := math.Abs(ns); {
	case a >= 1e9:
		return strconv.FormatFloat(ns/1e9, 'g', 3, 64) + " s"
	case a >= 1e6:
		return strconv.FormatFloat(ns/1e6, 'g', 3, 64) + " ms"
	}
	return strconv.FormatFloat(ns/1e3, 'g', 3, 64) + " us"
}

func f2(x float64) string {
	if math.IsInf(x, 1) {
		return "never"
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// Value is a claim's number: NaN (not measured) is null in JSON and +Inf
// (never, e.g. a queue that never drained) is "never", as in Metrics.
type Value float64

// MarshalJSON writes NaN as null, +Inf as "never" and -Inf as "-inf".
func (v Value) MarshalJSON() ([]byte, error) {
	x := float64(v)
	switch {
	case math.IsNaN(x):
		return []byte("null"), nil
	case math.IsInf(x, 1):
		return []byte(`"never"`), nil
	case math.IsInf(x, -1):
		return []byte(`"-inf"`), nil
	}
	return json.Marshal(x)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (v *Value) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "null":
		*v = Value(math.NaN())
		return nil
	case `"never"`:
		*v = Value(math.Inf(1))
		return nil
	case `"-inf"`:
		*v = Value(math.Inf(-1))
		return nil
	}
	var x float64
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	*v = Value(x)
	return nil
}
