package law

import (
	"flag"
	"os"
	"regexp"
	"testing"
)

var updateREADME = flag.Bool("update-readme", false, "rewrite the parameter tables of README.md from the law table")

var paramBlock = regexp.MustCompile(`(?s)(<!-- law-params: (\w+) [^>]*-->\n)(.*?)(<!-- /law-params -->)`)

// The parameter tables of README.md are law_table.h's, as `cclab law
// params --markdown` prints them: a default, range or description changed
// in one place and not the other fails here. Run
// go test ./kmod/law -run TestREADMEParamTables -update-readme to rewrite.
func TestREADMEParamTables(t *testing.T) {
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var failed bool
	out := paramBlock.ReplaceAllStringFunc(string(raw), func(block string) string {
		m := paramBlock.FindStringSubmatch(block)
		l, err := ParseLaw(m[2])
		if err != nil {
			t.Errorf("README table of %q: %v", m[2], err)
			return block
		}
		seen[m[2]] = true
		md, err := MarkdownParams(l)
		if err != nil {
			t.Fatal(err)
		}
		if md != m[3] {
			failed = true
		}
		return m[1] + md + m[4]
	})
	for _, name := range Laws() {
		if !seen[name] {
			t.Errorf("README.md has no parameter table of %s", name)
		}
	}
	if *updateREADME {
		if err := os.WriteFile("README.md", []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if failed {
		t.Error("README.md parameter tables differ from law_table.h: go test ./kmod/law -run TestREADMEParamTables -update-readme")
	}
}
