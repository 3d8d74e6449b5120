// Package yamlerrtest holds the checks the file readers' tests share on
// errors reported by package yamlerr.
package yamlerrtest

import (
	"regexp"
	"strings"
	"testing"
)

// Lines fails t unless err has exactly one line per want, in order, each
// starting with its want (file:line:column: message...).
func Lines(t testing.TB, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Fatal("accepted")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d errors, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("error %d: %q, want it to start %q", i, lines[i], w)
		}
	}
}

// Positioned fails t unless every line of err names file and a line,
// perhaps a column, before its message.
func Positioned(t testing.TB, file string, err error) {
	t.Helper()
	at := regexp.MustCompile(`^` + regexp.QuoteMeta(file) + `:\d+(:\d+)?: \S`)
	for _, l := range strings.Split(err.Error(), "\n") {
		if !at.MatchString(l) {
			t.Fatalf("error line %q names no position (all: %v)", l, err)
		}
	}
}
