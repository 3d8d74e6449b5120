package lawload

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/cilium/ebpf"

	"cclab/internal/bpfpin"
	kbpf "cclab/kmod/bpf"
)

// Ensure makes the laws registered with the parameters the settings ask
// for (see Resolve), for a run: a law cclab already registered with those
// parameters is kept, a missing one is loaded. A law registered with other
// parameters, or under its name by someone other than cclab, is an error
// (unload it first), and then nothing is loaded. It returns the
// registrations in force for the laws, in their order.
func Ensure(ctx context.Context, laws []string, settings []string, opts Options) ([]Registration, error) {
	want, have, err := wantAndHave(laws, settings, opts)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, ps := range want {
		i := registered(have, ps.Law, opts)
		if i < 0 {
			missing = append(missing, ps.Law)
			continue
		}
		if have[i].Params.String() != ps.String() {
			return nil, fmt.Errorf("%s is registered with other parameters (%s); want %s: cclab cc unload %s first",
				ps.Law, have[i].Params, ps, ps.Law)
		}
		if stale, why := staleBuild(have[i]); stale {
			return nil, fmt.Errorf("%s is registered %s: cclab cc unload %s first", ps.Law, why, ps.Law)
		}
	}
	if len(missing) > 0 {
		// Only the settings that concern the missing laws' parameters
		// matter now; Load resolves them again for those laws.
		var sub []string
		for _, s := range settings {
			if settingApplies(s, missing) {
				sub = append(sub, s)
			}
		}
		if _, err := Load(ctx, missing, sub, opts); err != nil {
			return nil, err
		}
		if have, err = List(opts); err != nil {
			return nil, err
		}
	}
	out := make([]Registration, 0, len(want))
	for _, ps := range want {
		i := registered(have, ps.Law, opts)
		if i < 0 {
			return nil, fmt.Errorf("%s: not registered after loading", ps.Law)
		}
		out = append(out, have[i])
	}
	return out, nil
}

// SettingsFor keeps the settings that concern one of laws (a "law.name"
// of one of them, or a plain name one of them has): what a registration of
// those laws takes from settings written for many.
func SettingsFor(laws []string, settings []string) []string {
	var out []string
	for _, s := range settings {
		if settingApplies(s, laws) {
			out = append(out, s)
		}
	}
	return out
}

// settingApplies reports whether a name=value setting concerns one of laws.
func settingApplies(setting string, laws []string) bool {
	ps, err := Resolve(laws, nil)
	if err != nil {
		return false
	}
	name, _, _ := cutSetting(setting)
	law, field := splitLawName(name)
	for _, p := range ps {
		if law != "" && law != p.Law {
			continue
		}
		if _, ok := p.Get(field); ok {
			return true
		}
	}
	return false
}

// Reconcile is Replace for a run, unless a live run relies on one of the
// laws with other parameters (CheckClaims): then nothing changes, and the
// error names that run.
func Reconcile(ctx context.Context, laws []string, settings []string, opts Options) ([]string, error) {
	if err := CheckClaims(laws, settings, opts); err != nil {
		return nil, fmt.Errorf("%w; wait for it to end, or run with its parameters", err)
	}
	return Replace(ctx, laws, settings, opts)
}

// Replace is Ensure for a run whose file names its laws' parameters: a
// law cclab registered with other parameters, or by another build of
// cclab, is unregistered and registered
// again with these (sockets still using the old registration keep it until
// they close). When laws of another build that the run does not use hold
// a shared map in a layout this build cannot use, they are unregistered
// too. It returns the laws it re-registered or unregistered.
func Replace(ctx context.Context, laws []string, settings []string, opts Options) ([]string, error) {
	stale, names, err := Differing(laws, settings, opts)
	if err != nil {
		return nil, err
	}
	if len(stale) > 0 {
		if _, err := Unload(names, opts); err != nil {
			return nil, fmt.Errorf("re-register %v: %w", stale, err)
		}
	}
	_, err = Ensure(ctx, laws, settings, opts)
	if errors.Is(err, ebpf.ErrMapIncompatible) {
		want, have, werr := wantAndHave(laws, settings, opts)
		if werr != nil {
			return stale, errors.Join(err, werr)
		}
		// Laws of another cclab build that this run does not use hold
		// a shared map laid out as that build had it: unregister those
		// (sockets using one keep it until they close), and the map goes
		// with the last of them.
		others, herr := staleHolders(want, have, names, opts)
		if herr != nil {
			return stale, errors.Join(err, herr)
		}
		if len(others) == 0 {
			return stale, err
		}
		if _, uerr := Unload(others, opts); uerr != nil {
			return stale, fmt.Errorf("unregister %v of another cclab build, which hold the shared maps: %w", others, uerr)
		}
		stale = append(stale, others...)
		_, err = Ensure(ctx, laws, settings, opts)
	}
	return stale, err
}

// Differing lists the laws whose registration under opts' name differs
// from what the settings ask (other parameters, or another build's), and
// those registered names: what Load refuses and Replace registers again.
func Differing(laws, settings []string, opts Options) (stale, names []string, err error) {
	want, have, err := wantAndHave(laws, settings, opts)
	if err != nil {
		return nil, nil, err
	}
	for _, ps := range want {
		i := registered(have, ps.Law, opts)
		if i < 0 {
			continue
		}
		if old, _ := staleBuild(have[i]); old || have[i].Params.String() != ps.String() {
			stale = append(stale, ps.Law)
			names = append(names, have[i].Name)
		}
	}
	return stale, names, nil
}

// staleHolders names the registrations of another cclab build (not among
// skip) that hold a shared map this build cannot use: those of laws whose
// objects declare the map. A map of that kind held by a program that is no
// law (an INT host agent of a run of that build) is an error: it goes when
// that run ends.
func staleHolders(want []Params, have []Registration, skip []string, opts Options) ([]string, error) {
	if len(want) == 0 {
		return nil, nil
	}
	spec, err := kbpf.Spec(want[0].Law)
	if err != nil {
		return nil, err
	}
	bad, err := incompatibleShared(spec, opts.pinDir())
	if err != nil || len(bad) == 0 {
		return nil, err
	}
	used, err := bpfpin.Users()
	if err != nil {
		return nil, err
	}
	for _, name := range bad {
		m, err := ebpf.LoadPinnedMap(filepath.Join(opts.pinDir(), name), nil)
		if err != nil {
			continue
		}
		info, ierr := m.Info()
		m.Close()
		if ierr != nil {
			continue
		}
		id, _ := info.ID()
		for typ := range used[id] {
			if typ != ebpf.StructOps {
				return nil, fmt.Errorf("the shared map %s of another cclab build is in use by a %v program (the INT host agent of a run of that build?): run again when it has ended", name, typ)
			}
		}
	}
	var out []string
	for _, r := range have {
		if !r.Stale() || slices.Contains(skip, r.Name) {
			continue
		}
		rs, err := kbpf.Spec(r.Law)
		if err != nil {
			continue
		}
		for _, name := range bad {
			if _, ok := rs.Maps[name]; ok {
				out = append(out, r.Name)
				break
			}
		}
	}
	return out, nil
}

// wantAndHave resolves the parameters the settings ask for and lists what
// cclab has registered.
func wantAndHave(laws, settings []string, opts Options) ([]Params, []Registration, error) {
	want, err := Resolve(laws, settings)
	if err != nil {
		return nil, nil, err
	}
	have, err := List(opts)
	return want, have, err
}

// registered is the index of law's registration under its name, or -1.
func registered(have []Registration, law string, opts Options) int {
	return slices.IndexFunc(have, func(r Registration) bool { return r.Law == law && r.Name == opts.name(law) })
}
