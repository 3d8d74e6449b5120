// Package layers holds the import rules of docs/architecture.md ("Layers")
// and checks a package graph against them: imports point down.
package layers

import (
	"fmt"
	"sort"
	"strings"
)

// A Rule forbids the packages From matches to import what To matches.
type Rule struct {
	Why      string
	From, To func(pkg string) bool
}

// under reports whether pkg is one of the given packages or below one.
func under(roots ...string) func(string) bool {
	return func(pkg string) bool {
		for _, r := range roots {
			if pkg == r || strings.HasPrefix(pkg, r+"/") {
				return true
			}
		}
		return false
	}
}

func not(f func(string) bool) func(string) bool { return func(p string) bool { return !f(p) } }

func and(fs ...func(string) bool) func(string) bool {
	return func(p string) bool {
		for _, f := range fs {
			if !f(p) {
				return false
			}
		}
		return true
	}
}

func everything(string) bool { return true }

// loaders are layer 1's packages that load BPF programs into the kernel.
var loaders = under("cclab/tcopt/intswitch", "cclab/tcopt/agent", "cclab/kmod/lawload", "cclab/kmod/bpf", "cclab/kmod/law/bpfcheck")

// foundation is layer 0: the formats and definitions everyone shares.
var foundation = and(under("cclab/topology", "cclab/rundir", "cclab/tcopt", "cclab/kmod/law", "cclab/internal"), not(loaders))

// Rules are the rules of docs/architecture.md.
var Rules = []Rule{
	{"nothing imports the command", everything, under("cclab/cmd")},
	{"only the command runs the reproduction suite", not(under("cclab/cmd")), under("cclab/reproduce")},
	{"analysis reads run directories; it does not build or load anything",
		under("cclab/analysis"), under("cclab/orchestrator", "cclab/reproduce", "cclab/tcopt/intswitch", "cclab/tcopt/agent", "cclab/kmod/lawload", "cclab/kmod/bpf")},
	{"the BPF loaders import neither the orchestrator nor analysis",
		loaders, under("cclab/orchestrator", "cclab/analysis", "cclab/reproduce", "cclab/cmd")},
	{"the foundations import nothing above them",
		foundation, under("cclab/orchestrator", "cclab/analysis", "cclab/reproduce", "cclab/cmd", "cclab/tcopt/intswitch", "cclab/tcopt/agent", "cclab/kmod/lawload", "cclab/kmod/bpf")},
}

// Check returns one line per import that breaks a rule, in order; graph
// maps each package to its imports.
func Check(graph map[string][]string, rules []Rule) []string {
	var out []string
	for pkg, imps := range graph {
		for _, imp := range imps {
			for _, r := range rules {
				if r.From(pkg) && r.To(imp) {
					out = append(out, fmt.Sprintf("%s imports %s: %s", pkg, imp, r.Why))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}
