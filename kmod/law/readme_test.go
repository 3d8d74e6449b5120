package law

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

var updateREADME = flag.Bool("update-readme", false, "rewrite the parameter tables of README.md from the law table")

// lawsEnd is the heading after the laws' sections: a new law's goes before it.
const lawsEnd = "## Where the papers are silent"

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
		if seen[name] {
			continue
		}
		if !*updateREADME {
			t.Errorf("README.md has no parameter table of %s: go test ./kmod/law -run TestREADMEParamTables -update-readme adds its section under \"## The laws\" (then describe the law there)", name)
			continue
		}
		// a new law: its section with the table, at the end of "## The laws"
		l, _ := ParseLaw(name)
		md, err := MarkdownParams(l)
		if err != nil {
			t.Fatal(err)
		}
		end := strings.Index(out, lawsEnd)
		if end < 0 {
			t.Fatalf("README.md: no %q to add %s's section before", lawsEnd, name)
		}
		section := fmt.Sprintf("### %s — `%s.h`\n\n<!-- law-params: %s (generated: cclab law params --markdown) -->\n%s<!-- /law-params -->\n\n", name, name, name, md)
		out = out[:end] + section + out[end:]
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
