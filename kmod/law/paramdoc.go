package law

import (
	"fmt"
	"strings"
)

// MarkdownParams is the parameter table of law l as kmod/law/README.md
// prints it, generated from law_table.h (TestREADMEParamTables keeps the
// README's copy current).
func MarkdownParams(l Law) (string, error) {
	p, err := DefaultParams(l)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("| parameter | unit | default | range | meaning |\n")
	b.WriteString("| --- | --- | --- | --- | --- |\n")
	for _, q := range p.Info() {
		fmt.Fprintf(&b, "| `%s` | %s | %d | %s | %s |\n", q.Name, q.Unit, q.Default, RangeText(q), q.Desc)
	}
	return b.String(), nil
}

// RangeText is a parameter's range as the docs and the CLI print it.
func RangeText(q ParamInfo) string {
	s := fmt.Sprintf("%d..%d", q.Min, q.Max)
	if q.Related {
		s += ", narrower (see meaning)"
	}
	return s
}
