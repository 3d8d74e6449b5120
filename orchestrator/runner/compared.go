package runner

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"cclab/kmod/lawload"
	"cclab/orchestrator/experiment"
)

// A Skip is a compared congestion control the run leaves out under
// skip_missing, and why (run.json, compare.json and the summary list them).
type Skip struct {
	CC     string `json:"cc"`
	Reason string `json:"reason"`
}

// checkCompared refuses a compared name cclab does not know, whatever
// skip_missing says: one of cclab's laws, a variant of the file, one of
// the kernel's own congestion controls or a name registered in this
// kernel. skip_missing is for known names this kernel lacks, never for a
// typo.
func checkCompared(exp *experiment.Experiment, avail map[string]bool) error {
	for i, cc := range exp.Compare {
		if _, variant := exp.Variants[cc]; variant || avail[cc] || lawload.KernelCC(cc) || slices.Contains(lawload.Laws(), cc) {
			continue
		}
		known := append(append(lawload.Laws(), lawload.KernelCCs()...), slices.Collect(maps.Keys(exp.Variants))...)
		var others []string // registered names not among the rest
		for _, n := range slices.Sorted(maps.Keys(avail)) {
			if !slices.Contains(known, n) {
				others = append(others, n)
			}
		}
		known = append(known, others...)
		hint := ""
		if n := nearest(cc, known); n != "" {
			hint = fmt.Sprintf(" (did you mean %s?)", n)
		}
		variants := "none"
		if len(exp.Variants) > 0 {
			variants = strings.Join(slices.Sorted(maps.Keys(exp.Variants)), ", ")
		}
		registered := "none"
		if len(others) > 0 {
			registered = strings.Join(others, ", ")
		}
		return fmt.Errorf("%s:%d: compare: %q is no congestion control cclab knows%s: not one of its laws (%s), a variant of this file (%s), one of the kernel's own (%s) or another name registered in this kernel (%s); skip_missing skips only known names this kernel lacks",
			exp.File, exp.CompareLine(i), cc, hint, strings.Join(lawload.Laws(), ", "), variants, strings.Join(lawload.KernelCCs(), ", "), registered)
	}
	return nil
}

// skipReason says why a known compared name is not available: what would
// make it so.
func skipReason(exp *experiment.Experiment, cc string) string {
	if slices.Contains(lawload.Laws(), cc) {
		if exp.Laws == nil {
			return "cclab's law is not registered and the file has no laws: section (with which the run registers it): `cclab cc load " + cc + "` registers it"
		}
		return "cclab's law is not registered"
	}
	return "the kernel's congestion control is not in this kernel's tcp_available_congestion_control: `modprobe tcp_" + cc + "` loads it where the kernel has the module"
}

// skippedNames lists the names of skips.
func skippedNames(skips []Skip) []string {
	out := make([]string, len(skips))
	for i, s := range skips {
		out[i] = s.CC
	}
	return out
}

// nearest is the name of known closest to name by edit distance, when
// within two edits (a typo); "" otherwise.
func nearest(name string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
