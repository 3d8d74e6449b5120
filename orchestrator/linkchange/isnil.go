package linkchange

import "reflect"

// isNil reports whether an interface holds a nil pointer.
func isNil(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
