package topology

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"cclab/internal/units"

	"gopkg.in/yaml.v3"
)

// Spec is a topology file as written (topologies/*.yaml). Exactly the
// section named by Kind is read; the others must be absent.
type Spec struct {
	Name      string               `yaml:"name"`
	Kind      string               `yaml:"kind"`
	FatTree   *FatTreeSpec         `yaml:"fattree"`
	LeafSpine *LeafSpineSpec       `yaml:"leafspine"`
	Dumbbell  *DumbbellSpec        `yaml:"dumbbell"`
	Star      *StarSpec            `yaml:"star"`
	Line      *LineSpec            `yaml:"line"`
	Links     map[string]*LinkSpec `yaml:"links"`
	// Rename gives generated nodes other names ("h0: client").
	Rename map[string]string `yaml:"rename"`
}

// LinkSpec is the configuration of one tier of links. HostBuffer is the
// queue at a host's end of a link (its NIC); only tiers that touch hosts
// accept it.
type LinkSpec struct {
	Rate       units.Rate     `yaml:"rate"`
	Buffer     units.Size     `yaml:"buffer"`
	Delay      units.Duration `yaml:"delay"`
	HostBuffer units.Size     `yaml:"host_buffer"`
}

// MTU is the interface MTU cclab builds with; no buffer may be smaller.
const MTU = 1500

// DefaultHostBuffer is the host NIC queue when a tier does not set
// host_buffer: large enough that TCP small queues, not NIC drops, hold a
// host back, so congestion happens in the switches where it is measured.
const DefaultHostBuffer units.Size = 1e6

// The kinds of topology and the link tiers each one has. A tier may be
// left out when links.default is given.
var kindTiers = map[string][]string{
	"fattree":   {"host", "edge_agg", "agg_core"},
	"leafspine": {"host", "leaf_spine"},
	"dumbbell":  {"host", "bottleneck"},
	"star":      {"host", "receiver"},
	"line":      {"host", "switch"},
}

// hostTiers are the tiers whose links have a host at one end.
var hostTiers = map[string]bool{"host": true, "receiver": true}

// Load reads, validates and expands a topology file. Errors carry
// file:line.
func Load(path string) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read topology: %w", err)
	}
	return Parse(path, data)
}

// Parse validates and expands a topology given as YAML; name is used in
// error messages (usually the file name).
func Parse(name string, data []byte) (*Plan, error) {
	spec, doc, err := decode(name, data)
	if err != nil {
		return nil, err
	}
	v := &validator{file: name, doc: doc}
	p, err := v.plan(spec)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// decode reads the YAML strictly (unknown keys are errors) and keeps the
// node tree so that later checks can name the line of a value.
func decode(name string, data []byte) (*Spec, *yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, fileErr(name, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil, fmt.Errorf("%s: empty topology file", name)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Spec
	if err := dec.Decode(&s); err != nil {
		return nil, nil, fileErr(name, err)
	}
	return &s, doc.Content[0], nil
}

var lineRe = regexp.MustCompile(`^(?:yaml: )?line (\d+): `)

// fileErr turns yaml.v3's "line N: msg" (one or several) into "file:N: msg".
func fileErr(name string, err error) error {
	var te *yaml.TypeError
	var msgs []string
	if errors.As(err, &te) {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	for i, m := range msgs {
		if g := lineRe.FindStringSubmatch(m); g != nil {
			msgs[i] = name + ":" + g[1] + ": " + m[len(g[0]):]
		} else {
			msgs[i] = name + ": " + strings.TrimPrefix(m, "yaml: ")
		}
	}
	return errors.New(strings.Join(msgs, "\n"))
}

// validator checks a decoded Spec and reports errors at the line of the
// offending key.
type validator struct {
	file string
	doc  *yaml.Node
}

// line returns the line of the value at path (keys of nested mappings), or
// of the deepest key that exists.
func (v *validator) line(path ...string) int {
	n := v.doc
	ln := n.Line
	for _, key := range path {
		if n.Kind != yaml.MappingNode {
			return ln
		}
		found := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				ln = n.Content[i].Line
				n = n.Content[i+1]
				found = true
				break
			}
		}
		if !found {
			return ln
		}
	}
	return ln
}

func (v *validator) errf(path []string, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", v.file, v.line(path...), fmt.Sprintf(format, args...))
}

func at(path ...string) []string { return path }

var nameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// plan validates the spec and runs the planner of its kind.
func (v *validator) plan(s *Spec) (*Plan, error) {
	if s.Name == "" {
		return nil, v.errf(nil, "missing name")
	}
	if !nameRe.MatchString(s.Name) {
		return nil, v.errf(at("name"), "name %q: use letters, digits, '-', '_' or '.'", s.Name)
	}
	tiers, ok := kindTiers[s.Kind]
	if !ok {
		return nil, v.errf(at("kind"), "kind %q: want one of fattree, leafspine, dumbbell, star, line", s.Kind)
	}
	sections := map[string]bool{
		"fattree": s.FatTree != nil, "leafspine": s.LeafSpine != nil,
		"dumbbell": s.Dumbbell != nil, "star": s.Star != nil, "line": s.Line != nil,
	}
	for sec, present := range sections {
		if present && sec != s.Kind {
			return nil, v.errf(at(sec), "section %q does not belong to kind %q", sec, s.Kind)
		}
	}
	if !sections[s.Kind] {
		return nil, v.errf(at("kind"), "kind %s needs a %q section", s.Kind, s.Kind)
	}
	links, err := v.tiers(s, tiers)
	if err != nil {
		return nil, err
	}
	var b *builder
	switch s.Kind {
	case "fattree":
		b, err = planFatTree(v, s.FatTree, links)
	case "leafspine":
		b, err = planLeafSpine(v, s.LeafSpine, links, s.Links["leaf_spine"] != nil && s.Links["leaf_spine"].Rate != 0)
	case "dumbbell":
		b, err = planDumbbell(v, s.Dumbbell, links)
	case "star":
		b, err = planStar(v, s.Star, links)
	case "line":
		b, err = planLine(v, s.Line, links)
	}
	if err != nil {
		return nil, err
	}
	if err := b.counts(); err != nil {
		return nil, v.errf(at(s.Kind), "%v", err)
	}
	if err := v.rename(b, s.Rename); err != nil {
		return nil, err
	}
	p := b.plan(s.Name, s.Kind)
	if err := v.names(p, s.Rename); err != nil {
		return nil, err
	}
	return p, nil
}

// tiers resolves the link configuration of every tier of the kind,
// filling absent tiers from links.default, and checks each value.
func (v *validator) tiers(s *Spec, tiers []string) (map[string]LinkSpec, error) {
	if len(s.Links) == 0 {
		return nil, v.errf(at("links"), "missing links (one entry per tier: %s)", strings.Join(tiers, ", "))
	}
	known := map[string]bool{"default": true}
	for _, t := range tiers {
		known[t] = true
	}
	for t := range s.Links {
		if !known[t] {
			return nil, v.errf(at("links", t), "links.%s: kind %s has tiers %s (and default)", t, s.Kind, strings.Join(tiers, ", "))
		}
	}
	out := map[string]LinkSpec{}
	for _, t := range append([]string{"default"}, tiers...) {
		ls, ok := s.Links[t]
		if !ok {
			continue
		}
		if ls == nil {
			return nil, v.errf(at("links", t), "links.%s is empty", t)
		}
		// With an oversubscription the leaf-spine rate is derived.
		derived := t == "leaf_spine" && s.LeafSpine != nil && s.LeafSpine.Oversubscription != 0
		if err := v.checkLink(t, ls, derived); err != nil {
			return nil, err
		}
	}
	def := s.Links["default"]
	for _, t := range tiers {
		ls := s.Links[t]
		if ls == nil {
			if def == nil {
				return nil, v.errf(at("links"), "links.%s missing (or give links.default)", t)
			}
			ls = def
		}
		c := *ls
		if c.HostBuffer == 0 {
			c.HostBuffer = DefaultHostBuffer
		}
		out[t] = c
	}
	return out, nil
}

func (v *validator) checkLink(tier string, ls *LinkSpec, derivedRate bool) error {
	if ls.Rate == 0 && !derivedRate {
		return v.errf(at("links", tier, "rate"), "links.%s.rate missing or zero (write e.g. 1Gbit)", tier)
	}
	if ls.Rate < 1e6 && !(derivedRate && ls.Rate == 0) {
		return v.errf(at("links", tier, "rate"), "links.%s.rate %v is below 1Mbit", tier, ls.Rate)
	}
	if ls.Buffer == 0 {
		return v.errf(at("links", tier, "buffer"), "links.%s.buffer missing (write e.g. 100KB)", tier)
	}
	if ls.Buffer < MTU {
		return v.errf(at("links", tier, "buffer"), "links.%s.buffer %v is smaller than one MTU (%d B)", tier, ls.Buffer, MTU)
	}
	if ls.Delay != 0 && ls.Delay.D()%time.Microsecond != 0 {
		return v.errf(at("links", tier, "delay"), "links.%s.delay %v: netem takes whole microseconds", tier, ls.Delay)
	}
	if ls.HostBuffer != 0 {
		if !hostTiers[tier] && tier != "default" {
			return v.errf(at("links", tier, "host_buffer"), "links.%s.host_buffer: only tiers with a host end (host, receiver) have one", tier)
		}
		if ls.HostBuffer < MTU {
			return v.errf(at("links", tier, "host_buffer"), "links.%s.host_buffer %v is smaller than one MTU (%d B)", tier, ls.HostBuffer, MTU)
		}
	}
	return nil
}

// positive checks a count in the kind's section.
func (v *validator) positive(kind, key string, n, min, max int) error {
	if n < min || n > max {
		return v.errf(at(kind, key), "%s.%s = %d: want %d..%d", kind, key, n, min, max)
	}
	return nil
}

// rename applies the rename map, checking that every old name exists.
func (v *validator) rename(b *builder, m map[string]string) error {
	for old, nu := range m {
		if _, ok := b.index[old]; !ok {
			return v.errf(at("rename", old), "rename: no node %q in this topology", old)
		}
		if !nameRe.MatchString(nu) {
			return v.errf(at("rename", old), "rename %s: bad node name %q", old, nu)
		}
	}
	for old, nu := range m {
		b.renameNode(old, nu)
	}
	return nil
}

// names checks that node names are unique and every interface name fits
// the kernel's 15 characters and is unique in its namespace.
func (v *validator) names(p *Plan, rename map[string]string) error {
	// where names a node: its rename entry if it was renamed.
	where := func(node string) []string {
		for old, nu := range rename {
			if nu == node {
				return at("rename", old)
			}
		}
		return at("kind")
	}
	seen := map[string]bool{}
	for _, n := range p.Nodes {
		if seen[n.Name] {
			return v.errf(where(n.Name), "two nodes are called %q", n.Name)
		}
		seen[n.Name] = true
	}
	ifaces := map[string]bool{}
	for _, l := range p.Links {
		for _, e := range []Port{l.A, l.B} {
			if len(e.Iface) > 15 {
				return v.errf(where(e.Iface), "interface %q on %s is longer than 15 characters (interfaces are named after the peer node: shorten its name)", e.Iface, e.Node)
			}
			key := e.Node + "\x00" + e.Iface
			if ifaces[key] {
				return v.errf(where(e.Iface), "two interfaces on %s are called %q", e.Node, e.Iface)
			}
			ifaces[key] = true
		}
	}
	return nil
}

func itoa(i int) string { return strconv.Itoa(i) }
