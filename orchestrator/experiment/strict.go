package experiment

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// decodeStrict decodes a mapping node into out (a pointer to a struct),
// rejecting keys the struct does not name. yaml.v3's KnownFields does the
// same but is lost below any type with its own UnmarshalYAML, which the
// entries need to remember their line. Its errors are a yaml.TypeError
// with every unknown key and every bad value, so that yaml.v3 goes on and
// the file's errors are reported together.
func decodeStrict(n *yaml.Node, out any) error {
	if n.Kind != yaml.MappingNode {
		return typeErr(n, "expected a mapping")
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
	var errs []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !known[k.Value] {
			errs = append(errs, fmt.Sprintf("line %d:%d: unknown field %q (known: %s)", k.Line, k.Column, k.Value, strings.Join(names, ", ")))
		}
	}
	err := n.Decode(out)
	var te *yaml.TypeError
	if errors.As(err, &te) {
		errs = append(errs, te.Errors...)
	} else if err != nil {
		return err
	}
	if len(errs) > 0 {
		return &yaml.TypeError{Errors: errs}
	}
	return nil
}
