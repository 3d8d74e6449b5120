package experiment

import (
	"errors"
	"maps"
	"slices"
	"strings"

	"cclab/kmod/law"
)

// validateLaws parses the laws section and every variant's set (the
// file's and the workload entries') once into typed settings, and checks
// them against the law table in user space: each value against its
// parameter's range, then each law's whole set against the law's own
// <law>_params_check (the relations between parameters). Nothing is
// loaded into the kernel. A problem is reported at the line of the
// setting to blame, once (a variant inherits the laws section's settings,
// an entry's set makes a variant for each compared law).
func (e *Experiment) validateLaws(p *problems) {
	o := once{p: p, seen: map[blame]bool{}}
	section := parseSettings(o, e.Laws, "", e.lawLines, e.LawsLine, "laws: ")
	e.LawSet = section.s
	byName := e.lawsByName()
	// The run registers the laws it runs by name with the whole section
	// (kmod/lawload refuses a setting none of them takes).
	for i, s := range section.s {
		if !slices.ContainsFunc(byName, s.AppliesTo) {
			o.add(blame{section.lines[i], s.Param}, "laws: %s: the file runs no law that has it under the law's own name (it runs %s); a variant's own settings go in its set:", s, lawNames(byName))
		}
	}
	for _, l := range byName {
		checkLaw(o, l, section, e.LawsLine, "laws: ")
	}
	for _, name := range slices.Sorted(maps.Keys(e.Variants)) {
		v := e.Variants[name]
		if slices.Contains(law.Laws(), name) {
			// Registered under a law's own name, it would replace that
			// law's registration, machine-wide.
			if v.Entry != "" {
				p.add(v.Line, "workload entry %q sets law parameters, so its flows would run as %q, the name of one of cclab's laws: rename the entry", v.Entry, name)
			} else {
				p.add(v.Line, "variant %s: the name of one of cclab's laws; give it a name of its own", name)
			}
			continue
		}
		what := "variant " + name + ": "
		if v.Entry != "" {
			what = "workload entry \"" + v.Entry + "\": set: "
		}
		l, err := law.ParseLaw(v.Law)
		if err != nil {
			if v.Entry != "" {
				p.add(v.Line, "workload entry %q sets law parameters, but its flows run %s in this run, not one of cclab's laws (%s)",
					v.Entry, v.Law, strings.Join(law.Laws(), ", "))
			} else {
				p.add(v.Line, "variant %s: %q is not one of cclab's laws (%s)", name, v.Law, strings.Join(law.Laws(), ", "))
			}
			continue
		}
		own := parseSettings(o, v.Set, v.Law+".", v.setLines, v.Line, what)
		v.Settings = own.s
		e.Variants[name] = v
		checkLaw(o, l, section.forLaw(l).then(own), v.Line, what)
	}
}

// lawsByName are cclab's laws the file's flows run under their own names
// (registered with the laws section alone); all of them when none is, so
// that a bad laws section is refused all the same.
func (e *Experiment) lawsByName() []law.Law {
	var out []law.Law
	for _, cc := range e.CCs() {
		if l, err := law.ParseLaw(cc); err == nil && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return law.All()
	}
	return out
}

// blame is what a problem is about: a parameter at a line ("" for the
// settings as a whole).
type blame struct {
	line  int
	param string
}

// once adds a problem about a blame only the first time.
type once struct {
	p    *problems
	seen map[blame]bool
}

func (o once) add(b blame, format string, args ...any) {
	if !o.seen[b] {
		o.seen[b] = true
		o.p.add(b.line, format, args...)
	}
}

// linedSettings are settings with the line each comes from.
type linedSettings struct {
	s     law.Settings
	lines []int
}

func (ls linedSettings) forLaw(l law.Law) linedSettings {
	var out linedSettings
	for i, s := range ls.s {
		if s.AppliesTo(l) {
			out.s, out.lines = append(out.s, s), append(out.lines, ls.lines[i])
		}
	}
	return out
}

func (ls linedSettings) then(more linedSettings) linedSettings {
	return linedSettings{append(slices.Clone(ls.s), more.s...), append(slices.Clone(ls.lines), more.lines...)}
}

func lawNames(laws []law.Law) string {
	out := make([]string, len(laws))
	for i, l := range laws {
		out[i] = l.String()
	}
	return strings.Join(out, ", ")
}

// parseSettings parses a section's name -> value map (each name prefixed
// with prefix) into settings: generic ones first, then those of one law,
// each in name order.
func parseSettings(o once, m map[string]string, prefix string, keyLines map[string]int, line int, what string) linedSettings {
	var generic, scoped linedSettings
	for _, k := range slices.Sorted(maps.Keys(m)) {
		at := line
		if kl, ok := keyLines[k]; ok {
			at = kl
		}
		s, err := law.ParseSetting(prefix+k, m[k])
		if err != nil {
			o.add(blame{at, k}, "%s%v", what, err)
			continue
		}
		to := &scoped
		if s.Law == 0 {
			to = &generic
		}
		to.s, to.lines = append(to.s, s), append(to.lines, at)
	}
	return generic.then(scoped)
}

// checkLaw checks law l's parameters with the settings ls on top of its
// defaults, reporting each refusal at the line of the setting it blames
// (line, the section's, when it blames none). A blamed setting is left
// out and the rest checked again, so that every bad one is reported.
func checkLaw(o once, l law.Law, ls linedSettings, line int, what string) {
	for range len(ls.s) + 1 {
		_, err := ls.s.Params(l)
		if err == nil {
			return
		}
		var se *law.SettingError
		if !errors.As(err, &se) || se.Index < 0 {
			o.add(blame{line: line}, "%s%v", what, err)
			return
		}
		i := se.Index
		o.add(blame{ls.lines[i], ls.s[i].Param}, "%s%v", what, err)
		ls = linedSettings{slices.Delete(slices.Clone(ls.s), i, i+1), slices.Delete(slices.Clone(ls.lines), i, i+1)}
	}
}
