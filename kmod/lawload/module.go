package lawload

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// sysModule is where the kernel lists loaded modules.
const sysModule = "/sys/module"

// A law built as a kernel module (kmod/) registers under the law's own name
// and exposes the fields of its parameter struct, by the same names, as
// module parameters; every write is checked by the law's own
// <law>_params_check() on the whole set (kmod/README.md, "Parameters").

// ModuleLoaded reports whether cclab's kernel module of law, tcp_<law>,
// is loaded. cclab's law modules use
// cclab_int's symbols, so cclab_int lists them as holders; a module of the
// same name that is not cclab's (Debian's tcp_dctcp) does not count.
func ModuleLoaded(law string) bool {
	_, err := os.Stat(filepath.Join(sysModule, "cclab_int", "holders", "tcp_"+law))
	return err == nil
}

// ForeignModule reports whether a kernel module that is not cclab's is
// loaded under law's module name, tcp_<law> (Debian's tcp_dctcp beside
// cclab's eBPF DCTCP): it holds the congestion-control name.
func ForeignModule(law string) bool {
	if _, err := os.Stat(filepath.Join(sysModule, "tcp_"+law)); err != nil {
		return false
	}
	return !ModuleLoaded(law)
}

func moduleParamDir(law string) string {
	return filepath.Join(sysModule, "tcp_"+law, "parameters")
}

// ApplyToModule writes ps into the parameters of the law's loaded module
// and returns what the module holds afterwards. The module checks each
// write against the whole set, so a value that is only valid beside
// another one still to be written is refused at first: refused writes are
// retried after the others until a pass writes nothing. A parameter the
// module does not have, or a value it still refuses, is an error; the
// writes already made stay (the module's set is valid at every step).
func ApplyToModule(ps Params) (Params, error) {
	dir := moduleParamDir(ps.Law)
	if _, err := os.Stat(dir); err != nil {
		return Params{}, fmt.Errorf("%s: kernel module tcp_%s is not loaded: %w", ps.Law, ps.Law, err)
	}
	todo := make([]Param, 0, len(ps.Fields))
	for _, p := range ps.Fields {
		cur, err := readModuleParam(dir, p.Name)
		if err != nil {
			return Params{}, fmt.Errorf("%s: %w", ps.Law, err)
		}
		if cur != p.String() {
			todo = append(todo, p)
		}
	}
	for len(todo) > 0 {
		var refused []Param
		var errs []error
		for _, p := range todo {
			err := os.WriteFile(filepath.Join(dir, p.Name), []byte(p.String()+"\n"), 0)
			if err != nil {
				refused = append(refused, p)
				errs = append(errs, fmt.Errorf("%s=%s: %w", p.Name, p, err))
			}
		}
		if len(refused) == len(todo) {
			return Params{}, fmt.Errorf("module tcp_%s refused %w (its kernel log says why)", ps.Law, errors.Join(errs...))
		}
		todo = refused
	}
	return ReadModule(ps)
}

// ReadModule reads the parameters in force of the law's module, as the
// fields of like (a Params of the same law, e.g. from Resolve).
func ReadModule(like Params) (Params, error) {
	dir := moduleParamDir(like.Law)
	out := like
	out.Fields = append([]Param(nil), like.Fields...)
	for _, p := range out.Fields {
		s, err := readModuleParam(dir, p.Name)
		if err != nil {
			return Params{}, fmt.Errorf("%s: %w", like.Law, err)
		}
		if err := out.set(p.Name, s); err != nil {
			return Params{}, fmt.Errorf("module tcp_%s: %w", like.Law, err)
		}
	}
	return out, nil
}

func readModuleParam(dir, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "", fmt.Errorf("module parameter %s: %w", name, err)
	}
	return strings.TrimSpace(string(b)), nil
}
