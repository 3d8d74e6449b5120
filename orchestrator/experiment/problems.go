package experiment

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"cclab/internal/yamlerr"
)

// problems collects every error validation finds in a file, each at the
// line of the part it is about; the column is that of the first key or
// value on the line (the field, or the entry, that line starts).
type problems struct {
	root *yaml.Node
	list []problem
}

type problem struct {
	line int
	msg  string
}

func (p *problems) add(line int, format string, args ...any) {
	p.list = append(p.list, problem{line, fmt.Sprintf(format, args...)})
}

func (p *problems) empty() bool { return len(p.list) == 0 }

// err is every problem at file:line:column, sorted; nil without any.
func (p *problems) err(file string) error {
	l := yamlerr.List{File: file}
	for _, pr := range p.list {
		l.Add(yamlerr.Pos{Line: pr.line, Col: yamlerr.ColumnOn(p.root, pr.line)}, "%s", pr.msg)
	}
	return l.Err()
}

// typeErr reports a bad value from an UnmarshalYAML as a yaml.TypeError:
// yaml.v3 then goes on decoding and reports every bad value of the file.
func typeErr(n *yaml.Node, format string, args ...any) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d:%d: ", n.Line, n.Column) + fmt.Sprintf(format, args...)}}
}
