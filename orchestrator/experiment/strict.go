package experiment

import (
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// decodeStrict decodes a mapping node into out (a pointer to a struct),
// rejecting keys the struct does not name. yaml.v3's KnownFields does the
// same but is lost below any type with its own UnmarshalYAML, which the
// entries need to remember their line.
func decodeStrict(n *yaml.Node, out any) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: expected a mapping", n.Line)
	}
	known := map[string]bool{}
	t := reflect.TypeOf(out).Elem()
	var names []string
	for i := 0; i < t.NumField(); i++ {
		tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		known[tag] = true
		names = append(names, tag)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !known[k.Value] {
			return fmt.Errorf("line %d: unknown field %q (known: %s)", k.Line, k.Value, strings.Join(names, ", "))
		}
	}
	return n.Decode(out)
}
