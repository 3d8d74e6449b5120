// Package yamlerr reports the errors of a YAML input file (a topology,
// an experiment) all at once, each at file:line:column, sorted by
// position: a user fixes a file in one pass instead of one error per try.
package yamlerr

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// A Pos is a place in a file: 1-based line and column. Col 0 means the
// column is unknown (yaml.v3 reports syntax errors by line only).
type Pos struct{ Line, Col int }

// At is the position of a node (the node itself when nil: line 1).
func At(n *yaml.Node) Pos {
	if n == nil || n.Line == 0 {
		return Pos{Line: 1}
	}
	return Pos{Line: n.Line, Col: n.Column}
}

// Key is the position of key in mapping n, or of n itself when the key is
// absent: an error about a missing key points at the mapping that lacks
// it.
func Key(n *yaml.Node, key string) Pos {
	if k, _ := Lookup(n, key); k != nil {
		return At(k)
	}
	return At(n)
}

// Lookup returns the key and value nodes of key in mapping n (nil, nil
// when n is not a mapping or has no such key).
func Lookup(n *yaml.Node, key string) (k, v *yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

func (p Pos) String() string {
	if p.Col > 0 {
		return fmt.Sprintf("%d:%d", p.Line, p.Col)
	}
	return fmt.Sprint(p.Line)
}

// An Item is one error at its position.
type Item struct {
	Pos Pos
	Msg string
}

// Error is every error found in one file, sorted by position.
type Error struct {
	File  string
	Items []Item
}

func (e *Error) Error() string {
	lines := make([]string, len(e.Items))
	for i, it := range e.Items {
		lines[i] = e.File + ":" + it.Pos.String() + ": " + it.Msg
	}
	return strings.Join(lines, "\n")
}

// List collects the errors of one file.
type List struct {
	File  string
	items []Item
}

// Add records an error at p.
func (l *List) Add(p Pos, format string, args ...any) {
	if p.Line < 1 {
		p = Pos{Line: 1}
	}
	l.items = append(l.items, Item{Pos: p, Msg: fmt.Sprintf(format, args...)})
}

// Merge adds the items of another file's Error (the same file's, read
// in another stage).
func (l *List) Merge(e *Error) { l.items = append(l.items, e.Items...) }

// Len is how many errors the list holds.
func (l *List) Len() int { return len(l.items) }

// Err returns nil without errors, else an *Error with every error sorted
// by line, column and message (duplicates, which two checks of one value
// may give, once).
func (l *List) Err() error {
	if len(l.items) == 0 {
		return nil
	}
	items := append([]Item(nil), l.items...)
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line < b.Pos.Line
		}
		if a.Pos.Col != b.Pos.Col {
			return a.Pos.Col < b.Pos.Col
		}
		return a.Msg < b.Msg
	})
	out := items[:0]
	for _, it := range items {
		if len(out) > 0 && it == out[len(out)-1] {
			continue
		}
		out = append(out, it)
	}
	return &Error{File: l.File, Items: out}
}
