package yamlerr

import (
	"bytes"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// lineMsg is yaml.v3's position prefix ("yaml: line 3: ...", "line 3: ..."),
// with the column that cclab's own unmarshalers add ("line 3:9: ...").
var lineMsg = regexp.MustCompile(`^(?:yaml: )?line (\d+)(?::(\d+))?: `)

// parserProblems are the problems yaml.v3's parser (not its scanner)
// reports. For them yaml.v3 prints the 0-based line of its mark as if it
// were 1-based (decode.go, parser.fail: only scanner errors get +1), so
// every such error names the line before the culprit, and one on the
// first line names none.
var parserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// Syntax turns the error of parsing data into a node tree (a syntax
// error) into the file's Error at the right line.
func Syntax(file string, data []byte, err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := lineMsg.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = err.Error()[len(m[0]):]
	}
	switch {
	case parserProblems[msg]:
		line++ // yaml.v3's 0-based mark; none printed means line 0
	case msg == "found a tab character that violates indentation" && line > 0:
		// yaml.v3 names the line where the scalar being continued
		// starts; the tab is on a line after it.
		line = tabLine(data, line)
	case line == 0:
		line = lineOfNoLine(data, msg)
	}
	return &Error{File: file, Items: []Item{{Pos: Pos{Line: line}, Msg: msg}}}
}

// tabLine is the first line from `from` on whose indentation holds a tab.
func tabLine(data []byte, from int) int {
	for i, l := range bytes.Split(data, []byte("\n")) {
		if i+1 < from {
			continue
		}
		indent := l[:len(l)-len(bytes.TrimLeft(l, " \t"))]
		if bytes.IndexByte(indent, '\t') >= 0 {
			return i + 1
		}
	}
	return from
}

var unknownAnchor = regexp.MustCompile(`^unknown anchor '(.*)' referenced$`)

// lineOfNoLine finds the line of an error yaml.v3 reports without one:
// an unknown alias, bytes that are not UTF-8, control characters. Others
// are put at line 1.
func lineOfNoLine(data []byte, msg string) int {
	if m := unknownAnchor.FindStringSubmatch(msg); m != nil {
		if i := bytes.Index(data, []byte("*"+m[1])); i >= 0 {
			return 1 + bytes.Count(data[:i], []byte("\n"))
		}
	}
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if (r == utf8.RuneError && n <= 1) || (unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t') {
			return 1 + bytes.Count(data[:i], []byte("\n"))
		}
		i += n
	}
	return 1
}

// Decode turns the error of decoding a well-formed node tree into a
// struct into the file's Error: every message of a yaml.TypeError (yaml.v3
// goes on past a bad value and reports them all) at its line, with the
// column found in root where yaml.v3 gives none.
func Decode(file string, root *yaml.Node, err error) *Error {
	var msgs []string
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	l := List{File: file}
	for _, m := range msgs {
		for _, part := range strings.Split(m, "\n") {
			part = strings.TrimSpace(part)
			if part == "" || part == "yaml: unmarshal errors:" {
				continue
			}
			it := decodeItem(root, part)
			l.Add(it.Pos, "%s", it.Msg)
		}
	}
	if l.Len() == 0 {
		l.Add(Pos{Line: 1}, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return l.Err().(*Error)
}

var (
	fieldNotFound = regexp.MustCompile(`^field (\S+) not found in type \S+$`)
	keyDefined    = regexp.MustCompile(`^mapping key "(.*)" already defined at line \d+$`)
	cannotDecode  = regexp.MustCompile("^cannot unmarshal \\S+ `([^`]*)` into")
)

func decodeItem(root *yaml.Node, msg string) Item {
	m := lineMsg.FindStringSubmatch(msg)
	if m == nil {
		return Item{Pos: Pos{Line: 1}, Msg: strings.TrimPrefix(msg, "yaml: ")}
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	msg = msg[len(m[0]):]
	if col == 0 {
		col = columnOn(root, line, msg)
	}
	if f := fieldNotFound.FindStringSubmatch(msg); f != nil {
		msg = "unknown field " + strconv.Quote(f[1]) // the Go type is no help to a user
	}
	return Item{Pos: Pos{Line: line, Col: col}, Msg: msg}
}

// ColumnOn is the column of the first key or value on line (0 when the
// line holds none).
func ColumnOn(root *yaml.Node, line int) int { return columnOn(root, line, "") }

// columnOn is the column of the node on line that msg is about: the key a
// field or duplicate error names, the value a type error quotes, else the
// first node on the line.
func columnOn(root *yaml.Node, line int, msg string) int {
	var want string
	prefix := false // yaml.v3 cuts a quoted value to 7 characters and "..."
	if f := fieldNotFound.FindStringSubmatch(msg); f != nil {
		want = f[1]
	} else if f := keyDefined.FindStringSubmatch(msg); f != nil {
		want = f[1]
	} else if f := cannotDecode.FindStringSubmatch(msg); f != nil {
		want, prefix = strings.TrimSuffix(f[1], "..."), strings.HasSuffix(f[1], "...")
	}
	first, match := 0, 0
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n == nil || match > 0 {
			return
		}
		if n.Line == line && n.Kind == yaml.ScalarNode {
			if first == 0 {
				first = n.Column
			}
			if want != "" && (n.Value == want || prefix && strings.HasPrefix(n.Value, want)) {
				match = n.Column
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(root)
	if match > 0 {
		return match
	}
	return first
}
