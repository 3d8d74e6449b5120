package experiment

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"cclab/internal/units"

	"gopkg.in/yaml.v3"
)

// Defaults for what a file may leave out.
const (
	DefaultQueueSample = time.Millisecond
	MinQueueSample     = 100 * time.Microsecond
	MaxQueueSample     = 10 * time.Millisecond

	DefaultCC      = "cubic"
	DefaultSeed    = 1
	DefaultTimeout = 30 * time.Second
	DefaultSnaplen = 128
)

// Load reads and validates an experiment file.
func Load(path string) (*Experiment, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("experiment: %w", err)
	}
	return Parse(path, data)
}

// Parse parses and validates the text of an experiment file; file names it
// in errors ("file:line: ...") and anchors the relative topology path.
func Parse(file string, data []byte) (*Experiment, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var e Experiment
	if err := dec.Decode(&e); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty experiment file", file)
		}
		return nil, atLine(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("%s:%d: a second YAML document; an experiment file holds one", file, extra.Line)
	}
	e.File = file
	if err := e.validate(); err != nil {
		return nil, atLine(file, err)
	}
	e.TopologyPath = e.Topology
	if !filepath.IsAbs(e.Topology) {
		e.TopologyPath = filepath.Join(filepath.Dir(file), e.Topology)
	}
	return &e, nil
}

var lineRe = regexp.MustCompile(`line (\d+): `)

// atLine turns "... line 12: msg" into "file:12: msg".
func atLine(file string, err error) error {
	s := err.Error()
	if m := lineRe.FindStringSubmatchIndex(s); m != nil {
		n, _ := strconv.Atoi(s[m[2]:m[3]])
		return fmt.Errorf("%s:%d: %s", file, n, s[m[1]:])
	}
	return fmt.Errorf("%s: %s", file, s)
}

func errAt(line int, format string, args ...any) error {
	return fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, args...))
}

// UnmarshalYAML decodes strictly and remembers the line.
func (e *Experiment) UnmarshalYAML(n *yaml.Node) error {
	type plain Experiment
	if err := decodeStrict(n, (*plain)(e)); err != nil {
		return err
	}
	e.Line = n.Line
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch n.Content[i].Value {
		case "laws":
			e.LawsLine = n.Content[i].Line
		case "compare":
			for _, c := range n.Content[i+1].Content {
				e.CompareLines = append(e.CompareLines, c.Line)
			}
		}
	}
	return nil
}

// UnmarshalYAML decodes strictly.
func (h *Hosts) UnmarshalYAML(n *yaml.Node) error {
	type plain Hosts
	h.Line = n.Line
	return decodeStrict(n, (*plain)(h))
}

func (h *Hosts) validate() error {
	if h.NICQueues == 0 {
		h.NICQueues = DefaultNICQueues
	}
	if h.NICQueues < 1 || h.NICQueues > MaxNICQueues {
		return errAt(h.Line, "hosts nic_queues %d is outside 1..%d", h.NICQueues, MaxNICQueues)
	}
	if h.InitRwnd != 0 && (h.InitRwnd < 64<<10 || h.InitRwnd > 16<<20) {
		return errAt(h.Line, "hosts init_rwnd %v: use 64KiB-16MiB (or leave it out: the kernel's 64 KB)", h.InitRwnd)
	}
	return nil
}

// decodeNoted decodes a mapping strictly into out (a pointer to a struct
// type without UnmarshalYAML) and notes its line and the keys it gives.
func decodeNoted(n *yaml.Node, out any, line *int, set *map[string]bool) error {
	*line, *set = n.Line, keysOf(n)
	return decodeStrict(n, out)
}

// UnmarshalYAML: decodeNoted (ecn_threshold and ecn_red: one at the most).
func (sw *Switch) UnmarshalYAML(n *yaml.Node) error {
	type plain Switch
	return decodeNoted(n, (*plain)(sw), &sw.Line, &sw.set)
}

// UnmarshalYAML: decodeNoted (ecn_threshold and ecn_red: exactly one).
func (p *ECNProfile) UnmarshalYAML(n *yaml.Node) error {
	type plain ECNProfile
	return decodeNoted(n, (*plain)(p), &p.Line, &p.set)
}

// UnmarshalYAML: decodeNoted (what is left out takes defaults).
func (r *RED) UnmarshalYAML(n *yaml.Node) error {
	type plain RED
	return decodeNoted(n, (*plain)(r), &r.Line, &r.set)
}

// UnmarshalYAML: decodeNoted (what is left out takes defaults).
func (q *QCN) UnmarshalYAML(n *yaml.Node) error {
	type plain QCN
	return decodeNoted(n, (*plain)(q), &q.Line, &q.set)
}

// UnmarshalYAML decodes strictly and remembers the line. A variant's
// marking is not its own field: say where it goes.
func (v *VariantSpec) UnmarshalYAML(n *yaml.Node) error {
	type plain VariantSpec
	v.Line = n.Line
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Value == "switch" || k.Value == "ecn_threshold" || k.Value == "ecn_red" || k.Value == "qcn" {
			return fmt.Errorf("line %d: a variant's ECN marking goes in the switch section, its QCN too: switch: {ecn_profiles: {NAME: {ecn_threshold: ... | ecn_red: {...}, qcn: {...}}}}", k.Line)
		}
	}
	return decodeStrict(n, (*plain)(v))
}

// keysOf returns the keys of a mapping node.
func keysOf(n *yaml.Node) map[string]bool {
	keys := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		keys[n.Content[i].Value] = true
	}
	return keys
}

// UnmarshalYAML decodes strictly and remembers the line.
func (em *Emulation) UnmarshalYAML(n *yaml.Node) error {
	type plain Emulation
	em.Line = n.Line
	return decodeStrict(n, (*plain)(em))
}

// UnmarshalYAML decodes strictly.
func (c *Capture) UnmarshalYAML(n *yaml.Node) error {
	type plain Capture
	return decodeStrict(n, (*plain)(c))
}

// UnmarshalYAML decodes strictly and remembers the line.
func (en *Entry) UnmarshalYAML(n *yaml.Node) error {
	type plain Entry
	if err := decodeStrict(n, (*plain)(en)); err != nil {
		return err
	}
	en.Line = n.Line
	return nil
}

// UnmarshalYAML decodes strictly and remembers the line.
func (l *Long) UnmarshalYAML(n *yaml.Node) error {
	type plain Long
	l.Line = n.Line
	return decodeStrict(n, (*plain)(l))
}

// UnmarshalYAML decodes strictly and remembers the line.
func (in *Incast) UnmarshalYAML(n *yaml.Node) error {
	type plain Incast
	in.Line = n.Line
	return decodeStrict(n, (*plain)(in))
}

// UnmarshalYAML decodes strictly and remembers the line.
func (p *Poisson) UnmarshalYAML(n *yaml.Node) error {
	type plain Poisson
	p.Line = n.Line
	return decodeStrict(n, (*plain)(p))
}

// UnmarshalYAML decodes strictly and remembers the line.
func (q *Query) UnmarshalYAML(n *yaml.Node) error {
	type plain Query
	q.Line = n.Line
	return decodeStrict(n, (*plain)(q))
}

var ccName = regexp.MustCompile(`^[a-z0-9_]{1,15}$`)

func checkCC(line int, cc string) error {
	if !ccName.MatchString(cc) {
		return errAt(line, "congestion control %q: not a kernel congestion control name", cc)
	}
	return nil
}

// validate checks what the file alone can tell and fills defaults. Checks
// against the topology (host names) are done by the workload generator.
func (e *Experiment) validate() error {
	if e.Name == "" {
		return errAt(e.Line, "missing name")
	}
	if e.Topology == "" {
		return errAt(e.Line, "missing topology (a topology file path, relative to this file)")
	}
	if e.Seed == 0 {
		e.Seed = DefaultSeed
	}
	if e.CC == "" {
		e.CC = DefaultCC
	}
	if err := checkCC(e.Line, e.CC); err != nil {
		return err
	}
	for name, v := range e.Variants {
		if err := checkCC(v.Line, name); err != nil {
			return fmt.Errorf("variant: %w", err)
		}
		if v.Law == "" {
			return errAt(v.Line, "variant %s: no law (variants: {%s: {law: hpcc, set: {...}}})", name, name)
		}
		if v.Law == name {
			return errAt(v.Line, "variant %s: named as its law; give it a name of its own", name)
		}
	}
	seen := map[string]bool{}
	for _, cc := range e.Compare {
		if err := checkCC(e.Line, cc); err != nil {
			return err
		}
		if seen[cc] {
			return errAt(e.Line, "compare lists %s twice", cc)
		}
		seen[cc] = true
	}
	if e.Timeout == 0 {
		e.Timeout = units.Duration(DefaultTimeout)
	}
	if err := e.Hosts.validate(); err != nil {
		return err
	}
	if err := e.Switch.validate(&e.Hosts, e.Compare); err != nil {
		return err
	}
	switch e.Emulation.DelayEngine {
	case "", "auto", "netem", "line":
	default:
		return errAt(e.Emulation.Line, "emulation delay_engine %q: use auto, netem or line", e.Emulation.DelayEngine)
	}
	if e.Capture.Snaplen == 0 {
		e.Capture.Snaplen = DefaultSnaplen
	}
	if e.Capture.Snaplen < 64 || e.Capture.Snaplen > 65535 {
		return errAt(e.Line, "capture snaplen %v: use 64B-65535B", e.Capture.Snaplen)
	}
	if len(e.Workload) == 0 {
		return errAt(e.Line, "empty workload: list at least one entry")
	}
	if e.Watch != 0 && (e.Watch < units.Duration(10*time.Millisecond) || e.Watch > units.Duration(time.Minute)) {
		return errAt(e.Line, "watch %v: record every 10ms to 1m (a sample of 16 hosts costs about 18 ms of CPU: docs/performance.md)", e.Watch)
	}
	if err := errors.Join(e.validateEvents()...); err != nil {
		return err
	}
	names := map[string]int{}
	for i := range e.Workload {
		en := &e.Workload[i]
		if en.Name == "" {
			return errAt(en.Line, "workload entry without a name")
		}
		if prev, dup := names[en.Name]; dup {
			return errAt(en.Line, "workload entry %q already defined at line %d", en.Name, prev)
		}
		names[en.Name] = en.Line
		if en.CC != "" {
			if err := checkCC(en.Line, en.CC); err != nil {
				return err
			}
		}
		switch en.Tool {
		case "", "inprocess":
			en.Tool = ""
		case "iperf3":
		default:
			return errAt(en.Line, "workload entry %q: tool %q: use inprocess or iperf3", en.Name, en.Tool)
		}
		if err := en.validate(); err != nil {
			return err
		}
	}
	return e.addEntryVariants()
}

// addEntryVariants makes the variant each entry's `set:` asks for in each
// run (EntryCC): the run's law, or the variant the run compares, with the
// entry's parameters on top.
func (e *Experiment) addEntryVariants() error {
	ccs := e.Compare
	if len(ccs) == 0 {
		ccs = []string{e.CC}
	}
	for i := range e.Workload {
		en := &e.Workload[i]
		if len(en.Set) == 0 {
			continue
		}
		for k := range en.Set {
			if k == "" || strings.Contains(k, ".") {
				return errAt(en.Line, "workload entry %q: set %q: give a parameter of the law (set: {init_rate_kbps: 100000})", en.Name, k)
			}
		}
		for _, cc := range ccs {
			base := cc
			if en.CC != "" {
				base = en.CC
			}
			name := e.EntryCC(en, cc)
			if !ccName.MatchString(name) {
				return errAt(en.Line, "workload entry %q sets law parameters, so its flows run as %q in the run of %s: not a kernel congestion control name (at most 15 of a-z, 0-9, _): shorten the entry's name", en.Name, name, cc)
			}
			if v, ok := e.Variants[name]; ok && v.Entry == "" {
				return errAt(en.Line, "workload entry %q: its flows' variant %q is already a variant of the file", en.Name, name)
			} else if ok && v.Entry != en.Name {
				return errAt(en.Line, "workload entry %q: its flows' variant %q is also entry %q's", en.Name, name, v.Entry)
			}
			if slices.Contains(ccs, name) {
				return errAt(en.Line, "workload entry %q: its flows' variant %q is a compared name", en.Name, name)
			}
			v := VariantSpec{Law: base, Set: map[string]string{}, Entry: en.Name, Line: en.Line}
			if own, ok := e.Variants[base]; ok {
				v.Law = own.Law
				maps.Copy(v.Set, own.Set)
			}
			maps.Copy(v.Set, en.Set)
			if e.Variants == nil {
				e.Variants = map[string]VariantSpec{}
			}
			e.Variants[name] = v
		}
	}
	return nil
}

func (en *Entry) validate() error {
	kinds := 0
	for _, set := range []bool{en.Long != nil, en.Incast != nil, en.Poisson != nil, en.Query != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return errAt(en.Line, "workload entry %q: give exactly one of long, incast, poisson, query", en.Name)
	}
	switch {
	case en.Long != nil:
		return en.Long.validate(en.Name)
	case en.Incast != nil:
		return en.Incast.validate(en.Name)
	case en.Poisson != nil:
		return en.Poisson.validate(en.Name)
	default:
		return en.Query.validate(en.Name)
	}
}

func window(line int, name string, start, stop units.Duration) error {
	if stop == 0 {
		return errAt(line, "%s: missing stop (when the flows stop)", name)
	}
	if stop <= start {
		return errAt(line, "%s: stop %v is not after start %v", name, stop, start)
	}
	return nil
}

func (l *Long) validate(name string) error {
	if l.Src == "" || l.Dst == "" {
		return errAt(l.Line, "%s: long flows need src and dst", name)
	}
	if l.Src == l.Dst {
		return errAt(l.Line, "%s: src and dst are both %s", name, l.Src)
	}
	if l.Count == 0 {
		l.Count = 1
	}
	if l.Count < 0 {
		return errAt(l.Line, "%s: count %d is negative", name, l.Count)
	}
	return window(l.Line, name, l.Start, l.Stop)
}

func (in *Incast) validate(name string) error {
	if in.Dst == "" {
		return errAt(in.Line, "%s: incast needs dst (the receiver)", name)
	}
	if len(in.Senders) > 0 && in.FanIn != 0 && in.FanIn != len(in.Senders) {
		return errAt(in.Line, "%s: fan_in %d but %d senders listed", name, in.FanIn, len(in.Senders))
	}
	if len(in.Senders) == 0 && in.FanIn <= 0 {
		return errAt(in.Line, "%s: incast needs fan_in > 0 or a list of senders", name)
	}
	for _, s := range in.Senders {
		if s == in.Dst {
			return errAt(in.Line, "%s: %s is both sender and receiver", name, s)
		}
	}
	if in.Size == 0 {
		return errAt(in.Line, "%s: incast needs size (bytes each sender sends)", name)
	}
	if in.PerStagger == 0 {
		in.PerStagger = 1
	}
	if in.PerStagger < 0 {
		return errAt(in.Line, "%s: per_stagger %d is negative", name, in.PerStagger)
	}
	if in.Repeat == 0 {
		in.Repeat = 1
	}
	if in.Repeat < 0 {
		return errAt(in.Line, "%s: repeat %d is negative", name, in.Repeat)
	}
	if in.Repeat > 1 && in.Every == 0 {
		return errAt(in.Line, "%s: repeat %d needs every (the period)", name, in.Repeat)
	}
	return nil
}

func (p *Poisson) validate(name string) error {
	if p.CDF == "" {
		return errAt(p.Line, "%s: poisson needs cdf (websearch, fb_hadoop or a file)", name)
	}
	if p.Load <= 0 {
		return errAt(p.Line, "%s: poisson needs load > 0 (e.g. \"30%%\")", name)
	}
	return window(p.Line, name, p.Start, p.Stop)
}

func (q *Query) validate(name string) error {
	if q.Rate <= 0 {
		return errAt(q.Line, "%s: query needs rate > 0 (queries per second)", name)
	}
	if q.FanIn <= 0 {
		return errAt(q.Line, "%s: query needs fan_in > 0", name)
	}
	if q.Size == 0 {
		return errAt(q.Line, "%s: query needs size (bytes each answer carries)", name)
	}
	return window(q.Line, name, q.Start, q.Stop)
}

// CCs returns every congestion control the experiment can use: the default,
// the compared ones and those pinned by entries.
func (e *Experiment) CCs() []string {
	seen := map[string]bool{}
	var out []string
	add := func(cc string) {
		if cc != "" && !seen[cc] {
			seen[cc] = true
			out = append(out, cc)
		}
	}
	add(e.CC)
	for _, cc := range e.Compare {
		add(cc)
	}
	for _, en := range e.Workload {
		add(en.CC)
	}
	return out
}

// validate checks the switch section and derives host defaults from it:
// with INT on, TCP timestamps default to off so that all 40 bytes of option
// space carry records (tcopt/README.md). ECN profiles are for names the
// run compares.
func (sw *Switch) validate(h *Hosts, compare []string) error {
	if sw == nil {
		return nil
	}
	if sw.set["ecn_threshold"] && sw.set["ecn_red"] {
		return errAt(sw.Line, "switch: ecn_threshold and ecn_red both given; a port marks one way (give one, or per compared name in ecn_profiles)")
	}
	if err := sw.ECNRed.validate(); err != nil {
		return err
	}
	if err := sw.QCN.validate(sw.INT); err != nil {
		return err
	}
	if sw.INTAll && !sw.INT {
		return errAt(sw.Line, "switch: int_all without int: true stamps nothing")
	}
	names := make([]string, 0, len(sw.ECNProfiles))
	for name := range sw.ECNProfiles {
		names = append(names, name)
	}
	sort.Strings(names) // the first error in the file's terms, always the same
	for _, name := range names {
		p := sw.ECNProfiles[name]
		if !slices.Contains(compare, name) {
			return errAt(p.Line, "switch ecn_profiles: %s is not compared (compare: [%s]); a profile is for a name in compare", name, strings.Join(compare, ", "))
		}
		if p.set["ecn_threshold"] && p.set["ecn_red"] {
			return errAt(p.Line, "switch ecn_profiles %s: ecn_threshold and ecn_red both given; a port marks one way", name)
		}
		if !p.set["ecn_threshold"] && !p.set["ecn_red"] && !p.set["qcn"] {
			return errAt(p.Line, "switch ecn_profiles %s: give ecn_threshold (0B: no marking) or ecn_red, and/or qcn", name)
		}
		if err := p.ECNRed.validate(); err != nil {
			return err
		}
		if err := p.QCN.validate(sw.INT); err != nil {
			return err
		}
	}
	if sw.QueueSample == 0 {
		sw.QueueSample = units.Duration(DefaultQueueSample)
	}
	if d := sw.QueueSample.D(); d < MinQueueSample || d > MaxQueueSample {
		return errAt(sw.Line, "queue_sample %v is outside %v..%v", d, MinQueueSample, MaxQueueSample)
	}
	if sw.INT && h.TCPTimestamps == nil {
		off := false
		h.TCPTimestamps = &off
	}
	return nil
}

// validate fills QCN's default sampling interval and checks the
// congestion point; its feedback rides in the INT option, so INT must be on.
func (q *QCN) validate(intOn bool) error {
	if q == nil {
		return nil
	}
	if !q.set["qeq"] || q.Qeq == 0 {
		return errAt(q.Line, "qcn: give qeq, the equilibrium queue (the QCN paper's testbed: 64KB at 1 Gbit/s)")
	}
	if !intOn {
		return errAt(q.Line, "qcn: the congestion point's feedback rides in the INT option: set int: true in the switch section")
	}
	if !q.set["sample"] {
		q.Sample = DefaultQCNSample
	}
	const most = units.Size(1 << 29)
	if q.Sample == 0 || q.Sample > most || q.Qeq > most {
		return errAt(q.Line, "qcn: qeq %v and sample %v must be in 1B..%v", q.Qeq, q.Sample, most)
	}
	return nil
}

// validate fills RED's default pmax and checks the profile. Kmin and
// Kmax have no default: the papers' bytes are for their rates and delays,
// and a time-scaled fabric keeps them in BDPs, not in proportion to its
// port rates (docs/scaling.md).
func (r *RED) validate() error {
	if r == nil {
		return nil
	}
	if !r.set["kmin"] || !r.set["kmax"] {
		return errAt(r.Line, "ecn_red: give kmin and kmax (HPCC's DCQCN marking is 100KB/400KB at 25 Gbit/s with its delays: scale them as the fabric is scaled, docs/scaling.md)")
	}
	if !r.set["pmax"] {
		r.Pmax = DefaultREDPmax
	}
	if r.Kmin >= r.Kmax {
		return errAt(r.Line, "ecn_red: kmin %v is not below kmax %v", r.Kmin, r.Kmax)
	}
	if r.Pmax < 1e-6 {
		return errAt(r.Line, "ecn_red: pmax %v: the probability of marking at kmax must be above 0 (at most 1; e.g. 0.2 or \"20%%\")", float64(r.Pmax))
	}
	return nil
}
