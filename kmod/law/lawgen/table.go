package main

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// A row is one law of LAW_TABLE (kmod/law/law_table.h).
type row struct {
	id     int
	name   string // the C prefix and congestion-control name
	signal string
	traits []string // LAW_T_* names, as written
}

func (r row) has(trait string) bool {
	for _, t := range r.traits {
		if t == trait {
			return true
		}
	}
	return false
}

var (
	tableDef = regexp.MustCompile(`(?m)^#define LAW_TABLE\(X\)(.*)$`)
	rowRe    = regexp.MustCompile(`X\(\s*(\d+),\s*(\w+),\s*(\w+),\s*"([^"]*)",\s*([^)]*)\)`)
	traitRe  = regexp.MustCompile(`^LAW_T_[A-Z]+$`)
)

// readTable parses the rows of LAW_TABLE from law_table.h's text. The
// parser reads only the table's macro: the rows must be X(id, name, NAME,
// "signal", LAW_T_A | LAW_T_B) with ids 1, 2, ... in order.
func readTable(path string) ([]row, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read law table: %w", err)
	}
	// one logical line per macro: join the continuations
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	m := tableDef.FindStringSubmatch(text)
	if m == nil {
		return nil, fmt.Errorf("%s: no #define LAW_TABLE(X)", path)
	}
	var rows []row
	for _, r := range rowRe.FindAllStringSubmatch(m[1], -1) {
		id, _ := strconv.Atoi(r[1])
		if id != len(rows)+1 {
			return nil, fmt.Errorf("%s: law %s has id %d, want %d (ids count up from 1)", path, r[2], id, len(rows)+1)
		}
		if strings.ToUpper(r[2]) != r[3] {
			return nil, fmt.Errorf("%s: law %s is spelt %s in capitals", path, r[2], r[3])
		}
		var traits []string
		if t := strings.TrimSpace(r[5]); t != "0" {
			for _, f := range strings.Split(t, "|") {
				f = strings.TrimSpace(f)
				if !traitRe.MatchString(f) {
					return nil, fmt.Errorf("%s: law %s: trait %q is not a LAW_T_ name", path, r[2], f)
				}
				traits = append(traits, f)
			}
		}
		rows = append(rows, row{id: id, name: r[2], signal: r[4], traits: traits})
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: LAW_TABLE has no rows", path)
	}
	return rows, nil
}
