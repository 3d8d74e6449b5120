package lawload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"

	"cclab/internal/bpfpin"
	kbpf "cclab/kmod/bpf"
)

// PinDir is where registrations and shared maps are pinned (INT_ECHO_PIN_DIR
// in tcopt/int_echo.h). Runs' cleanup does not touch it; Unload does.
const PinDir = "/sys/fs/bpf/cclab-cc"

// Laws lists the laws that have an eBPF build.
func Laws() []string { return kbpf.Laws() }

// Options change where and under which name a law is registered; the zero
// value is the real thing (PinDir, the law's own name).
type Options struct {
	// PinDir replaces PinDir (tests use a directory of their own).
	PinDir string
	// Names maps a law to the congestion-control name to register it
	// under (at most 15 characters), when not its own.
	Names map[string]string
	// ClaimDir replaces ClaimDir, where live runs record the laws they
	// rely on (tests use a directory of their own).
	ClaimDir string
}

func (o Options) pinDir() string {
	if o.PinDir != "" {
		return o.PinDir
	}
	return PinDir
}

func (o Options) name(law string) string {
	if n, ok := o.Names[law]; ok {
		return n
	}
	return law
}

// Registration is one law registered by cclab.
type Registration struct {
	Law    string `json:"law"`
	Name   string `json:"name"` // in tcp_available_congestion_control
	Params Params `json:"params"`
	Pin    string `json:"pin"` // its directory under the pin directory
	// Programs are the struct_ops programs by name (set by Load only).
	Programs map[string]ebpf.ProgramID `json:"-"`
	// Existing: Load found it registered already, with these parameters.
	Existing bool `json:"existing,omitempty"`
	// Build identifies the object registered (kbpf.Build), "" when the
	// registration predates the record.
	Build string `json:"build,omitempty"`
}

// regDir is the directory of a registration: the law's name, or
// "<law>@<name>" when registered under another name (bpffs forbids dots).
func regDir(pinDir, law, name string) string {
	if law == name {
		return filepath.Join(pinDir, law)
	}
	return filepath.Join(pinDir, law+"@"+name)
}

// Resolve returns the parameters each law would be loaded with: its
// defaults overridden by settings "name=value" (a setting applies to every
// listed law that has the parameter; "law.name=value" to one law), checked
// by the law core. An unknown law or parameter, or values out of range, are
// an error.
func Resolve(laws []string, settings []string) ([]Params, error) {
	if len(laws) == 0 {
		laws = Laws()
	}
	out := make([]Params, 0, len(laws))
	specs := make([]*ebpf.CollectionSpec, 0, len(laws))
	for _, law := range laws {
		if slices.Contains(laws[:len(out)], law) {
			return nil, fmt.Errorf("law %s named twice", law)
		}
		spec, err := kbpf.Spec(law)
		if err != nil {
			return nil, fmt.Errorf("%w (have: %s)", err, strings.Join(Laws(), ", "))
		}
		ps, err := defaults(law, spec)
		if err != nil {
			return nil, err
		}
		out = append(out, ps)
		specs = append(specs, spec)
	}
	for _, s := range settings {
		name, value, ok := cutSetting(s)
		if !ok {
			return nil, fmt.Errorf("parameter %q: want name=value or law.name=value", s)
		}
		only, name := splitLawName(name)
		if only != "" && !slices.Contains(laws, only) {
			return nil, fmt.Errorf("parameter %q: law %s is not being loaded", s, only)
		}
		applied := false
		for i := range out {
			if only != "" && out[i].Law != only {
				continue
			}
			if _, has := out[i].Get(name); !has {
				if only != "" {
					return nil, out[i].set(name, value)
				}
				continue
			}
			if err := out[i].set(name, value); err != nil {
				return nil, err
			}
			applied = true
		}
		if !applied {
			return nil, fmt.Errorf("unknown parameter %q: no law among %s has it", name, strings.Join(laws, ", "))
		}
	}
	for i, ps := range out {
		if err := check(specs[i], ps); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// cutSetting splits "name=value"; ok is false when either is empty.
func cutSetting(s string) (name, value string, ok bool) {
	name, value, ok = strings.Cut(s, "=")
	return name, value, ok && name != "" && value != ""
}

// splitLawName splits "law.param" when law names a law.
func splitLawName(name string) (law, param string) {
	if l, n, dotted := strings.Cut(name, "."); dotted && slices.Contains(Laws(), l) {
		return l, n
	}
	return "", name
}

// Load registers laws (all of them when none is named) with their defaults
// overridden by settings (see Resolve). Everything is checked before
// anything is registered, and a failure unregisters what this call
// registered: it registers all the laws or none.
func Load(ctx context.Context, laws []string, settings []string, opts Options) ([]Registration, error) {
	params, err := Resolve(laws, settings)
	if err != nil {
		return nil, err
	}
	mine, err := List(opts)
	if err != nil {
		return nil, err
	}
	var kept []Registration
	var todo []Params
	for _, ps := range params {
		name := opts.name(ps.Law)
		if len(name) > 15 || name == "" {
			return nil, fmt.Errorf("congestion control name %q: want 1-15 characters", name)
		}
		if r, ok := registrationNamed(mine, name); ok {
			// Registered by cclab: the same law, parameters and build
			// is what was asked for; anything else is a conflict.
			if stale, why := staleBuild(r); stale {
				return nil, fmt.Errorf("%s is registered %s: cclab cc unload %s, then load it again (or cclab cc load --force)", name, why, name)
			}
			if r.Law == ps.Law && r.Params.String() == ps.String() {
				r.Existing = true
				kept = append(kept, r)
				continue
			}
			return nil, fmt.Errorf("%s is registered with other parameters (%s): cclab cc unload %s, then load it again (or cclab cc load --force)",
				name, paramsDiff(r, ps), name)
		}
		taken, err := IsRegistered(name)
		if err != nil {
			return nil, err
		}
		if taken {
			return nil, fmt.Errorf("congestion control %q is already registered, not by cclab (tcp_available_congestion_control)", name)
		}
		todo = append(todo, ps)
	}
	var done []Registration
	for _, ps := range todo {
		if err := ctx.Err(); err != nil {
			return nil, errors.Join(err, unregister(done, opts.pinDir()))
		}
		r, err := register(ps, opts)
		if err != nil {
			return nil, errors.Join(err, unregister(done, opts.pinDir()))
		}
		done = append(done, r)
	}
	return append(kept, done...), nil
}

func registrationNamed(regs []Registration, name string) (Registration, bool) {
	for _, r := range regs {
		if r.Name == name {
			return r, true
		}
	}
	return Registration{}, false
}

// paramsDiff says how a registration differs from what was asked:
// "law hpcc, not swift" or "eta_ppm 950000, asked 900000; ...".
func paramsDiff(r Registration, ps Params) string {
	if r.Law != ps.Law {
		return fmt.Sprintf("law %s, asked %s", r.Law, ps.Law)
	}
	var d []string
	for _, f := range ps.Fields {
		old, ok := r.Params.Get(f.Name)
		if !ok {
			d = append(d, f.Name+" unknown to the registered object")
		} else if old.Value != f.Value {
			d = append(d, fmt.Sprintf("%s %s, asked %s", f.Name, old, f))
		}
	}
	if len(d) == 0 {
		return "the parameter layout differs"
	}
	return strings.Join(d, "; ")
}

// register loads one law's object with its parameters and name, attaches
// its struct_ops link and pins what must outlive this process.
func register(ps Params, opts Options) (Registration, error) {
	spec, err := kbpf.Spec(ps.Law)
	if err != nil {
		return Registration{}, err
	}
	_, v, err := layout(ps.Law, spec)
	if err != nil {
		return Registration{}, err
	}
	if err := v.Set(ps.bytes()); err != nil {
		return Registration{}, fmt.Errorf("set %s parameters: %w", ps.Law, err)
	}
	name := opts.name(ps.Law)
	if err := setOpsName(spec, name); err != nil {
		return Registration{}, fmt.Errorf("%s: %w", ps.Law, err)
	}
	// The parameter programs are for Resolve only.
	delete(spec.Programs, defaultProg)
	delete(spec.Programs, checkProg)

	pinDir := opts.pinDir()
	if err := os.MkdirAll(pinDir, 0o700); err != nil {
		return Registration{}, fmt.Errorf("create pin directory: %w", err)
	}
	coll, err := loadCollection(spec, pinDir)
	if errors.Is(err, ebpf.ErrMapIncompatible) {
		coll, err = loadReplacingShared(spec, pinDir)
	}
	if errors.Is(err, ebpf.ErrMapIncompatible) {
		return Registration{}, fmt.Errorf("load %s: %w (the shared maps in %s were made by another cclab build, whose laws or INT agent still hold them: cclab cc unload them)", ps.Law, err, pinDir)
	}
	if err != nil {
		return Registration{}, fmt.Errorf("load %s: %w", ps.Law, err)
	}
	defer coll.Close()

	dir := regDir(pinDir, ps.Law, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return Registration{}, fmt.Errorf("create %s: %w", dir, err)
	}
	fail := func(err error) (Registration, error) {
		return Registration{}, errors.Join(err, removeRegDir(dir))
	}
	if err := coll.Maps[rodataSection].Pin(filepath.Join(dir, "rodata")); err != nil {
		return fail(fmt.Errorf("pin %s parameters: %w", ps.Law, err))
	}
	build, err := kbpf.Build(ps.Law)
	if err != nil {
		return fail(err)
	}
	if err := pinBuild(filepath.Join(dir, buildPin), build); err != nil {
		return fail(fmt.Errorf("pin %s build: %w", ps.Law, err))
	}
	l, err := link.AttachStructOps(link.StructOpsOptions{Map: coll.Maps[structOpsMap]})
	if err != nil {
		return fail(fmt.Errorf("register %s as %q: %w", ps.Law, name, err))
	}
	defer l.Close()
	if err := l.Pin(filepath.Join(dir, "link")); err != nil {
		return fail(fmt.Errorf("pin %s link: %w", ps.Law, err))
	}
	progs := make(map[string]ebpf.ProgramID, len(coll.Programs))
	for pn, p := range coll.Programs {
		if info, err := p.Info(); err == nil {
			if id, ok := info.ID(); ok {
				progs[pn] = id
			}
		}
	}
	return Registration{Law: ps.Law, Name: name, Params: ps, Pin: dir, Programs: progs, Build: build}, nil
}

// loadCollection loads with the shared maps pinned by name in pinDir. Two
// loaders racing to create the same shared map: the loser retries and
// uses the winner's.
func loadCollection(spec *ebpf.CollectionSpec, pinDir string) (*ebpf.Collection, error) {
	opts := ebpf.CollectionOptions{Maps: ebpf.MapOptions{PinPath: pinDir}}
	coll, err := ebpf.NewCollectionWithOptions(spec, opts)
	if errors.Is(err, os.ErrExist) {
		coll, err = ebpf.NewCollectionWithOptions(spec, opts)
	}
	if err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			return nil, fmt.Errorf("%v", ve)
		}
		return nil, err
	}
	return coll, nil
}

// loadReplacingShared loads again after letting go of the pinned shared
// maps that spec cannot use (made by another cclab build, laid out as that
// build had them) and that no loaded program uses any more (their last
// users gone, or going: the kernel frees a detached struct_ops program
// some time after it is unregistered, so this waits up to sharedRetry for
// them). Compatible maps, and incompatible ones still in use, stay; the
// load then fails as before.
func loadReplacingShared(spec *ebpf.CollectionSpec, pinDir string) (*ebpf.Collection, error) {
	deadline := time.Now().Add(sharedRetry)
	for {
		stale, err := incompatibleShared(spec, pinDir)
		if err != nil {
			return nil, err
		}
		used, err := bpfpin.Users()
		if err != nil {
			return nil, err
		}
		busy := false
		for _, name := range stale {
			users, err := bpfpin.UnpinUnused(filepath.Join(pinDir, name), used)
			if err != nil {
				return nil, err
			}
			busy = busy || len(users) > 0
		}
		coll, err := loadCollection(spec, pinDir)
		if !errors.Is(err, ebpf.ErrMapIncompatible) || !busy || time.Now().After(deadline) {
			return coll, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// incompatibleShared names the shared maps pinned in pinDir that spec
// declares differently.
func incompatibleShared(spec *ebpf.CollectionSpec, pinDir string) ([]string, error) {
	var out []string
	for _, name := range sharedMaps {
		ms, ok := spec.Maps[name]
		if !ok {
			continue
		}
		m, err := ebpf.LoadPinnedMap(filepath.Join(pinDir, name), nil)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("open pinned %s: %w", name, err)
		}
		if ms.Compatible(m) != nil {
			out = append(out, name)
		}
		m.Close()
	}
	return out, nil
}

// sharedRetry is how long loadReplacingShared waits for the programs of
// unregistered laws to go.
const sharedRetry = 3 * time.Second

// setOpsName writes the congestion-control name into the struct_ops value.
func setOpsName(spec *ebpf.CollectionSpec, name string) error {
	m, ok := spec.Maps[structOpsMap]
	if !ok || len(m.Contents) != 1 {
		return fmt.Errorf("object has no %s struct_ops map", structOpsMap)
	}
	st, ok := btf.As[*btf.Struct](m.Value)
	if !ok {
		return fmt.Errorf("%s: value is not a struct", structOpsMap)
	}
	data, ok := m.Contents[0].Value.([]byte)
	if !ok {
		return fmt.Errorf("%s: unexpected contents %T", structOpsMap, m.Contents[0].Value)
	}
	for _, mem := range st.Members {
		if mem.Name != "name" {
			continue
		}
		off := int(mem.Offset.Bytes())
		field := data[off : off+16]
		clear(field)
		copy(field[:15], name)
		return nil
	}
	return fmt.Errorf("%s has no name field", structOpsMap)
}

// buildPin names the pinned one-entry array that holds a registration's
// build identity (kbpf.Build), next to its link and parameters.
const buildPin = "build"

func pinBuild(path, build string) error {
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: uint32(len(build)), MaxEntries: 1})
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Put(uint32(0), []byte(build)); err != nil {
		return err
	}
	return m.Pin(path)
}

// readBuild is a registration's pinned build identity, "" when it has none.
func readBuild(dir string) string {
	m, err := ebpf.LoadPinnedMap(filepath.Join(dir, buildPin), nil)
	if err != nil {
		return ""
	}
	defer m.Close()
	v := make([]byte, m.ValueSize())
	if err := m.Lookup(uint32(0), &v); err != nil {
		return ""
	}
	return string(v)
}

// Stale reports whether the registration holds another build of its law
// than this binary embeds (kbpf.Build): re-register it.
func (r Registration) Stale() bool {
	stale, _ := staleBuild(r)
	return stale
}

// staleBuild reports whether a registration holds another build of its
// law than this binary's (a cclab rebuilt since it registered): its code
// and its trace records may not be this build's.
func staleBuild(r Registration) (bool, string) {
	want, err := kbpf.Build(r.Law)
	if err != nil || r.Build == want {
		return false, ""
	}
	if r.Build == "" {
		return true, "by a cclab build that did not record its build"
	}
	return true, "by another cclab build (" + r.Build[:12] + ", this one is " + want[:12] + ")"
}
