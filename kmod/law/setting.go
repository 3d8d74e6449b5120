package law

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// A Setting is one law parameter an experiment file or the command line
// gives, parsed once: the law (0: every law that has the parameter), the
// parameter as law_table.h names it, and its value in that row's unit.
type Setting struct {
	Law   Law
	Param string
	Value uint64
}

// ParseSetting reads key ("param" or "law.param") and its value. The law
// must be one of the table's, the parameter one of its rows (of some
// law's, without a law), and the value a non-negative integer in the
// row's unit; ranges and relations are Settings.Params' to check.
func ParseSetting(key, value string) (Setting, error) {
	var s Setting
	lawName, param, scoped := strings.Cut(key, ".")
	if !scoped {
		param, lawName = lawName, ""
	}
	if param == "" {
		return s, fmt.Errorf("parameter %q: give param or law.param", key)
	}
	if scoped {
		l, err := ParseLaw(lawName)
		if err != nil {
			return s, fmt.Errorf("parameter %q: %w", key, err)
		}
		s.Law = l
	}
	s.Param = param
	if _, ok := s.info(); !ok {
		if s.Law != 0 {
			return s, fmt.Errorf("parameter %q: %s has no parameter %s (it has: %s)", key, s.Law, param, strings.Join(paramNames(s.Law), ", "))
		}
		return s, fmt.Errorf("parameter %q: no law has it (prefix a law for its list: `cclab law params --law LAW`)", key)
	}
	v, err := strconv.ParseUint(strings.TrimSpace(value), 10, 64)
	if err != nil {
		return s, fmt.Errorf("parameter %s: value %q is not a non-negative integer (in %s)", key, value, s.unit())
	}
	s.Value = v
	return s, nil
}

// info is the table row of the parameter, from its law or the first law
// that has it.
func (s Setting) info() (ParamInfo, bool) {
	for _, l := range All() {
		if s.Law != 0 && l != s.Law {
			continue
		}
		p, _ := DefaultParams(l)
		for _, q := range p.Info() {
			if q.Name == s.Param {
				return q, true
			}
		}
	}
	return ParamInfo{}, false
}

func (s Setting) unit() string {
	q, _ := s.info()
	return q.Unit
}

// AppliesTo reports whether the setting sets a parameter of law l.
func (s Setting) AppliesTo(l Law) bool {
	if s.Law != 0 {
		return s.Law == l
	}
	p, _ := DefaultParams(l)
	_, ok := p.Get(s.Param)
	return ok
}

// String is the setting as the laws' loaders take it (`cclab cc load`'s
// "param=value" or "law.param=value"): the wire to kmod/lawload.
func (s Setting) String() string {
	if s.Law == 0 {
		return s.Param + "=" + strconv.FormatUint(s.Value, 10)
	}
	return s.Law.String() + "." + s.Param + "=" + strconv.FormatUint(s.Value, 10)
}

// Settings are settings in the order they apply: a later one wins.
type Settings []Setting

// Strings is every setting as String gives it.
func (ss Settings) Strings() []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.String()
	}
	return out
}

// For are the settings that apply to law l.
func (ss Settings) For(l Law) Settings {
	var out Settings
	for _, s := range ss {
		if s.AppliesTo(l) {
			out = append(out, s)
		}
	}
	return out
}

// Get is the value the settings give l's parameter param, and whether
// they give one.
func (ss Settings) Get(l Law, param string) (uint64, bool) {
	for i := len(ss) - 1; i >= 0; i-- {
		if ss[i].Param == param && ss[i].AppliesTo(l) {
			return ss[i].Value, true
		}
	}
	return 0, false
}

// A SettingError is a setting the law table refuses: Index is the
// setting's place in its Settings (-1 when the refusal is about the set
// as a whole).
type SettingError struct {
	Index int
	Err   error
}

func (e *SettingError) Error() string { return e.Err.Error() }
func (e *SettingError) Unwrap() error { return e.Err }

// Params is law l's parameters: its defaults with the settings that
// apply to it on top, checked in user space by the law core's own
// <law>_params_check (ranges, units and the relations between
// parameters, law_table.h), the check the loaders' builds run. An error
// is a *SettingError naming the setting to blame.
func (ss Settings) Params(l Law) (*Params, error) {
	p, err := DefaultParams(l)
	if err != nil {
		return nil, err
	}
	info := map[string]ParamInfo{}
	for _, q := range p.Info() {
		info[q.Name] = q
	}
	for i, s := range ss {
		if !s.AppliesTo(l) {
			continue
		}
		q := info[s.Param]
		if err := p.Set(s.Param, s.Value); err != nil {
			return nil, &SettingError{i, fmt.Errorf("%s %w", l, err)}
		}
		if s.Value < q.Min || s.Value > q.Max {
			return nil, &SettingError{i, fmt.Errorf("%s %s=%d %s: outside its range %s (%s)", l, s.Param, s.Value, q.Unit, RangeText(q), q.Desc)}
		}
	}
	if err := p.Check(); err != nil {
		return nil, &SettingError{ss.blame(l, err), err}
	}
	return p, nil
}

// blame is the index of the last setting of l whose parameter the check's
// message names (-1: none does).
func (ss Settings) blame(l Law, err error) int {
	msg := err.Error()
	for i := len(ss) - 1; i >= 0; i-- {
		if ss[i].AppliesTo(l) && strings.Contains(msg, ss[i].Param) {
			return i
		}
	}
	return -1
}

// paramNames are law l's parameter names, sorted.
func paramNames(l Law) []string {
	p, _ := DefaultParams(l)
	var out []string
	for _, q := range p.Info() {
		out = append(out, q.Name)
	}
	slices.Sort(out)
	return out
}

// ParseAssignments reads command-line settings ("param=value" or
// "law.param=value"), in order.
func ParseAssignments(args []string) (Settings, error) {
	var out Settings
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return nil, fmt.Errorf("parameter %q: want param=value or law.param=value", a)
		}
		s, err := ParseSetting(strings.TrimSpace(k), v)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// ParseLaws reads law names (none: every law).
func ParseLaws(names []string) ([]Law, error) {
	if len(names) == 0 {
		return All(), nil
	}
	var out []Law
	for _, n := range names {
		l, err := ParseLaw(n)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, l) {
			return nil, fmt.Errorf("law %s named twice", l)
		}
		out = append(out, l)
	}
	return out, nil
}

// Check checks the settings as a loader applies them to laws: a setting
// of one law is for one of laws, one without a law sets a parameter one
// of them has, and each law's parameters pass Params.
func (ss Settings) Check(laws []Law) error {
	for _, s := range ss {
		if !slices.ContainsFunc(laws, s.AppliesTo) {
			if s.Law != 0 {
				return fmt.Errorf("parameter %s: law %s is not among %s", s, s.Law, lawList(laws))
			}
			return fmt.Errorf("parameter %s: none of %s has it", s, lawList(laws))
		}
	}
	for _, l := range laws {
		if _, err := ss.Params(l); err != nil {
			return err
		}
	}
	return nil
}

func lawList(laws []Law) string {
	names := make([]string, len(laws))
	for i, l := range laws {
		names[i] = l.String()
	}
	return strings.Join(names, ", ")
}
