package topology

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"cclab/internal/units"
	"cclab/internal/yamlerr"

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
	// Purpose "plumbing" marks a topology without propagation delay,
	// for plumbing tests: every RTT on it is CPU time, so a run's
	// numbers are not results and `cclab run` says so (docs/scaling.md).
	Purpose string `yaml:"purpose"`
	// Rename gives generated nodes other names ("h0: client").
	Rename map[string]string `yaml:"rename"`
	// Delay says where the links' propagation delay is held.
	Delay *DelaySpec `yaml:"delay"`
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

// PurposePlumbing is the purpose of a topology for plumbing tests.
const PurposePlumbing = "plumbing"

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
// file:line:column, every one the file has (yamlerr).
func Load(path string) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read topology: %w", err)
	}
	return Parse(path, data)
}

// Parse validates and expands a topology given as YAML; name is used in
// error messages (usually the file name). A syntax error is reported
// alone; otherwise every bad value, then every check the values fail, at
// its position (a *yamlerr.Error).
func Parse(name string, data []byte) (*Plan, error) {
	spec, doc, err := decode(name, data)
	if err != nil {
		return nil, err
	}
	v := &validator{errs: yamlerr.List{File: name}, doc: doc}
	p := v.plan(spec)
	if err := v.errs.Err(); err != nil {
		return nil, err
	}
	return p, nil
}

// decode reads the YAML strictly (unknown keys are errors) and keeps the
// node tree so that later checks can name the position of a value.
func decode(name string, data []byte) (*Spec, *yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, yamlerr.Syntax(name, data, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil, &yamlerr.Error{File: name, Items: []yamlerr.Item{{Pos: yamlerr.Pos{Line: 1}, Msg: "empty topology file"}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, nil, &yamlerr.Error{File: name, Items: []yamlerr.Item{{Pos: yamlerr.At(root), Msg: "a topology file is a mapping (name:, kind:, links: ...)"}}}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Spec
	if err := dec.Decode(&s); err != nil {
		return nil, nil, yamlerr.Decode(name, root, err)
	}
	return &s, root, nil
}

// validator checks a decoded Spec and collects every error at the
// position of the offending key.
type validator struct {
	errs yamlerr.List
	doc  *yaml.Node
}

// pos returns the position of the key at path (keys of nested mappings),
// or of the deepest key that exists.
func (v *validator) pos(path ...string) yamlerr.Pos {
	n := v.doc
	p := yamlerr.At(n)
	for _, key := range path {
		k, val := yamlerr.Lookup(n, key)
		if k == nil {
			return p
		}
		p, n = yamlerr.At(k), val
	}
	return p
}

// has reports whether the file gives the key at path.
func (v *validator) has(path ...string) bool {
	n := v.doc
	for _, key := range path {
		_, n = yamlerr.Lookup(n, key)
		if n == nil {
			return false
		}
	}
	return true
}

func (v *validator) errf(path []string, format string, args ...any) {
	v.errs.Add(v.pos(path...), format, args...)
}

func at(path ...string) []string { return path }

var nameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// plan validates the spec and runs the planner of its kind. It returns
// nil when it found errors (in v.errs). Name, kind, sections, links and
// the kind's counts are all checked; the plan is built, and its names
// and delays checked, only from counts that passed.
func (v *validator) plan(s *Spec) *Plan {
	switch {
	case s.Name == "":
		v.errf(nil, "missing name")
	case !nameRe.MatchString(s.Name):
		v.errf(at("name"), "name %q: use letters, digits, '-', '_' or '.'", s.Name)
	}
	if s.Purpose != "" && s.Purpose != PurposePlumbing {
		v.errf(at("purpose"), "purpose %q: the only purpose a file states is %q (no propagation delay: for plumbing tests, not results)", s.Purpose, PurposePlumbing)
	}
	tiers, ok := kindTiers[s.Kind]
	if !ok {
		v.errf(at("kind"), "kind %q: want one of fattree, leafspine, dumbbell, star, line", s.Kind)
	}
	sections := map[string]bool{
		"fattree": s.FatTree != nil, "leafspine": s.LeafSpine != nil,
		"dumbbell": s.Dumbbell != nil, "star": s.Star != nil, "line": s.Line != nil,
	}
	for _, sec := range []string{"fattree", "leafspine", "dumbbell", "star", "line"} {
		if sections[sec] && sec != s.Kind && ok {
			v.errf(at(sec), "section %q does not belong to kind %q", sec, s.Kind)
		}
	}
	if ok && !sections[s.Kind] {
		v.errf(at("kind"), "kind %s needs a %q section", s.Kind, s.Kind)
	}
	links := v.tiers(s, tiers)
	if !ok || !sections[s.Kind] {
		return nil
	}
	var b *builder
	switch s.Kind {
	case "fattree":
		b = planFatTree(v, s.FatTree, links)
	case "leafspine":
		b = planLeafSpine(v, s.LeafSpine, links, s.Links["leaf_spine"] != nil && s.Links["leaf_spine"].Rate != 0)
	case "dumbbell":
		b = planDumbbell(v, s.Dumbbell, links)
	case "star":
		b = planStar(v, s.Star, links)
	case "line":
		b = planLine(v, s.Line, links)
	}
	if b == nil || links == nil {
		return nil
	}
	if err := b.counts(); err != nil {
		v.errf(at(s.Kind), "%v", err)
		return nil
	}
	if !v.rename(b, s.Rename) {
		return nil
	}
	p := b.plan(s.Name, s.Kind)
	p.Purpose = s.Purpose
	if s.Delay != nil {
		var err error
		if p.DelayPlacement, err = parsePlacement(s.Delay.Placement); err != nil {
			v.errf(at("delay", "placement"), "%v", err)
		}
	}
	if p.Purpose == PurposePlumbing && p.HasDelay() {
		v.errf(at("purpose"), "purpose %s is for a topology without propagation delay, and this one has delays", PurposePlumbing)
	}
	v.names(p, s.Rename)
	v.delayLine(p)
	return p
}

// tiers resolves the link configuration of every tier of the kind,
// filling absent tiers from links.default, and checks each value. It
// returns nil when a tier is missing (the errors say which).
func (v *validator) tiers(s *Spec, tiers []string) map[string]LinkSpec {
	if len(s.Links) == 0 {
		v.errf(at("links"), "missing links (one entry per tier: %s)", strings.Join(tiers, ", "))
		return nil
	}
	known := map[string]bool{"default": true}
	for _, t := range tiers {
		known[t] = true
	}
	names := make([]string, 0, len(s.Links))
	for t := range s.Links {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		if !known[t] && tiers != nil {
			v.errf(at("links", t), "links.%s: kind %s has tiers %s (and default)", t, s.Kind, strings.Join(tiers, ", "))
		}
	}
	for _, t := range append([]string{"default"}, tiers...) {
		ls, ok := s.Links[t]
		if !ok {
			continue
		}
		if ls == nil {
			v.errf(at("links", t), "links.%s is empty", t)
			continue
		}
		// With an oversubscription the leaf-spine rate is derived.
		derived := t == "leaf_spine" && s.LeafSpine != nil && s.LeafSpine.Oversubscription != 0
		v.checkLink(t, ls, derived)
	}
	if tiers == nil {
		return nil
	}
	def := s.Links["default"]
	out := map[string]LinkSpec{}
	complete := true
	for _, t := range tiers {
		ls := s.Links[t]
		if ls == nil {
			if _, given := s.Links[t]; !given && def == nil {
				v.errf(at("links"), "links.%s missing (or give links.default)", t)
			}
			if def == nil {
				complete = false
				continue
			}
			ls = def
		}
		c := *ls
		if c.HostBuffer == 0 {
			c.HostBuffer = DefaultHostBuffer
		}
		out[t] = c
	}
	if !complete {
		return nil
	}
	return out
}

// checkLink checks one tier's values against what the machine can
// emulate (limits.go); each error names the value, the limit and why.
func (v *validator) checkLink(tier string, ls *LinkSpec, derivedRate bool) {
	switch {
	case ls.Rate == 0 && !derivedRate:
		v.errf(at("links", tier, "rate"), "links.%s.rate missing or zero (write e.g. 1Gbit)", tier)
	case ls.Rate != 0 && ls.Rate < MinRate:
		v.errf(at("links", tier, "rate"), "links.%s.rate %v is below %v", tier, ls.Rate, MinRate)
	case ls.Rate > MaxRate:
		v.errf(at("links", tier, "rate"), "links.%s.rate %v is above %v, the fastest link this machine emulates (a veth carries 9-14 Gbit/s here at best; a faster link would run at the CPU's pace, not its rate)", tier, ls.Rate, MaxRate)
	}
	v.checkBuffer(tier, "buffer", ls.Buffer)
	if ls.Delay != 0 && ls.Delay.D()%time.Microsecond != 0 {
		v.errf(at("links", tier, "delay"), "links.%s.delay %v: netem takes whole microseconds", tier, ls.Delay)
	}
	// A path over this link alone has twice its delay as RTT; whole paths
	// are checked once the plan is built (delayLine).
	if 2*ls.Delay.D() >= MaxRTT {
		v.errf(at("links", tier, "delay"), "links.%s.delay %v: a path over it has a propagation RTT of at least %v, not below %v, TCP's initial retransmission timeout: every connection would retransmit its SYN and flows would measure the timer, not the fabric", tier, ls.Delay, 2*ls.Delay.D(), MaxRTT)
	}
	if ls.HostBuffer != 0 {
		if !hostTiers[tier] && tier != "default" {
			v.errf(at("links", tier, "host_buffer"), "links.%s.host_buffer: only tiers with a host end (host, receiver) have one", tier)
		}
		v.checkBuffer(tier, "host_buffer", ls.HostBuffer)
	}
}

// checkBuffer checks a port buffer: one MTU at least, MaxBuffer at most.
func (v *validator) checkBuffer(tier, key string, b units.Size) {
	switch {
	case b == 0 && key == "buffer":
		v.errf(at("links", tier, key), "links.%s.buffer missing (write e.g. 100KB)", tier)
	case b < MTU && b != 0:
		v.errf(at("links", tier, key), "links.%s.%s %v is smaller than one MTU (%d B)", tier, key, b, MTU)
	case b > MaxBuffer:
		v.errf(at("links", tier, key), "links.%s.%s %v is above %v per port (a full queue is kernel memory, and the FIFO counts bytes in 32 bits)", tier, key, b, units.Size(MaxBuffer))
	}
}

// positive checks a count in the kind's section.
func (v *validator) positive(kind, key string, n, min, max int) bool {
	if n < min || n > max {
		v.errf(at(kind, key), "%s.%s = %d: want %d..%d", kind, key, n, min, max)
		return false
	}
	return true
}

// rename applies the rename map, checking that every old name exists;
// false when one does not (nothing is renamed then).
func (v *validator) rename(b *builder, m map[string]string) bool {
	olds := make([]string, 0, len(m))
	for old := range m {
		olds = append(olds, old)
	}
	sort.Strings(olds)
	ok := true
	for _, old := range olds {
		if _, found := b.index[old]; !found {
			v.errf(at("rename", old), "rename: no node %q in this topology", old)
			ok = false
		}
		if nu := m[old]; !nameRe.MatchString(nu) {
			v.errf(at("rename", old), "rename %s: bad node name %q", old, nu)
			ok = false
		}
	}
	if !ok {
		return false
	}
	for _, old := range olds {
		b.renameNode(old, m[old])
	}
	return true
}

// names checks that node names are unique and every interface name fits
// the kernel's 15 characters and is unique in its namespace.
func (v *validator) names(p *Plan, rename map[string]string) {
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
			v.errf(where(n.Name), "two nodes are called %q", n.Name)
		}
		seen[n.Name] = true
	}
	ifaces := map[string]bool{}
	for _, l := range p.Links {
		for _, e := range []Port{l.A, l.B} {
			if len(e.Iface) > 15 {
				v.errf(where(e.Iface), "interface %q on %s is longer than 15 characters (interfaces are named after the peer node: shorten its name)", e.Iface, e.Node)
			}
			key := e.Node + "\x00" + e.Iface
			if ifaces[key] {
				v.errf(where(e.Iface), "two interfaces on %s are called %q", e.Node, e.Iface)
			}
			ifaces[key] = true
		}
	}
}

// delayLine checks that the plan's delays can be emulated: every pair's
// shortest paths have one delay, every path's RTT is below MaxRTT, and the
// FIFOs the delay line allocates for all delayed ports fit MaxLineMemory. Its errors point at the delay
// of the tier with the longest delay.
func (v *validator) delayLine(p *Plan) {
	if !p.HasDelay() {
		return
	}
	var longest Link
	for _, l := range p.Links {
		if l.Delay > longest.Delay {
			longest = l
		}
	}
	// The tier whose key gives that delay: its own, or links.default.
	tier := longest.Tier
	if !v.has("links", tier, "delay") {
		tier = "default"
	}
	where := at("links", tier, "delay")
	// Path placement: every host's port holds its paths' delay. Link
	// placement: both ends of every delayed link. Those are the line's
	// ports, checked before the all-pairs path search, which grows with
	// hosts x links.
	if p.DelayPlacement == PlaceLink {
		if n := 2 * delayedLinks(p); n > MaxDelayedHosts {
			v.errf(where, "links.%s.delay %v: %d delayed link ends under link placement; the delay line serves at most %d ports", tier, longest.Delay, n, MaxDelayedHosts)
			return
		}
	} else if hosts := len(p.Hosts()); hosts > MaxDelayedHosts {
		v.errf(where, "links.%s.delay %v: %d hosts, each behind a delayed port; the delay line serves at most %d ports", tier, longest.Delay, hosts, MaxDelayedHosts)
		return
	}
	ports, err := p.DelayPorts()
	if err != nil {
		v.errf(where, "%v", err)
		return
	}
	paths, err := p.PathDelays()
	if err != nil {
		v.errf(where, "%v", err)
		return
	}
	var total int64
	var oneWay time.Duration
	classes := 0
	for _, dp := range ports {
		for _, b := range dp.Buffers {
			total += b
		}
		classes += len(dp.Classes)
	}
	for _, pd := range paths {
		oneWay = max(oneWay, pd.MaxOneWay)
	}
	if 2*oneWay >= MaxRTT && 2*longest.Delay.D() < MaxRTT { // else checkLink said so
		v.errf(where, "links.%s.delay %v: the longest path's propagation RTT is %v, not below %v, TCP's initial retransmission timeout: every connection would retransmit its SYN and flows would measure the timer, not the fabric",
			tier, longest.Delay, 2*oneWay, MaxRTT)
	}
	if total > MaxLineMemory {
		v.errf(where, "links.%s.delay %v: the delay line would allocate %.1f GB for %d delay classes on %d ports (%s), more than the %.0f GB it may take on this machine: shorten the delays or lower the rates (docs/scaling.md)",
			tier, longest.Delay, float64(total)/1e9, classes, len(ports), bufferRule(p), float64(MaxLineMemory)/1e9)
	}
}

// delayedLinks counts the links with a propagation delay.
func delayedLinks(p *Plan) int {
	n := 0
	for _, l := range p.Links {
		if l.Delay > 0 {
			n++
		}
	}
	return n
}

// bufferRule says how the line sizes a class's buffer under p's placement.
func bufferRule(p *Plan) string {
	if p.DelayPlacement == PlaceLink {
		return "each twice its link's bytes in flight, + 1 MiB"
	}
	return "each twice what its switch's other links bring in during its delay, + 1 MiB"
}

func itoa(i int) string { return strconv.Itoa(i) }
