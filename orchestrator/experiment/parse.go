package experiment

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"cclab/internal/units"
	"cclab/internal/yamlerr"
	"cclab/topology"

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
// in errors and anchors the relative topology path. A syntax error is
// reported alone; otherwise every bad value, or else every check the
// values fail, each at file:line:column, sorted (a *yamlerr.Error).
func Parse(file string, data []byte) (*Experiment, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlerr.Syntax(file, data, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, &yamlerr.Error{File: file, Items: []yamlerr.Item{{Pos: yamlerr.Pos{Line: 1}, Msg: "empty experiment file"}}}
	}
	root := doc.Content[0]
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var e Experiment
	if err := dec.Decode(&e); err != nil {
		return nil, yamlerr.Decode(file, root, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &yamlerr.Error{File: file, Items: []yamlerr.Item{{Pos: yamlerr.At(&extra), Msg: "a second YAML document; an experiment file holds one"}}}
	}
	e.File = file
	p := &problems{root: root}
	e.validate(p)
	if err := p.err(file); err != nil {
		return nil, err
	}
	e.TopologyPath = e.Topology
	if !filepath.IsAbs(e.Topology) {
		e.TopologyPath = filepath.Join(filepath.Dir(file), e.Topology)
	}
	return &e, nil
}

// UnmarshalYAML decodes strictly and remembers the line.
func (e *Experiment) UnmarshalYAML(n *yaml.Node) error {
	type plain Experiment
	if err := decodeStrict(n, (*plain)(e)); err != nil {
		return err
	}
	e.Line = n.Line
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "compare" {
			for _, c := range n.Content[i+1].Content {
				e.CompareLines = append(e.CompareLines, c.Line)
			}
		}
	}
	if k, v := yamlerr.Lookup(n, "laws"); k != nil {
		e.LawsLine, e.lawLines = k.Line, keyLines(v)
	}
	e.TopologyPos = yamlerr.Key(n, "topology")
	return nil
}

// UnmarshalYAML decodes strictly.
func (h *Hosts) UnmarshalYAML(n *yaml.Node) error {
	type plain Hosts
	h.Line = n.Line
	return decodeStrict(n, (*plain)(h))
}

// validate checks the hosts' settings and fills their defaults; lossless
// (a pfc section) makes a NIC one FIFO, as a lossless port is one TBF
// over one FIFO, and raises rto_min (DefaultLosslessRTOMin).
func (h *Hosts) validate(p *problems, lossless bool) {
	if lossless && h.NICQueues > 1 {
		p.add(h.Line, "hosts nic_queues %d: a lossless fabric's host port is one FIFO (its pausable TBF); leave nic_queues out or give 1", h.NICQueues)
	}
	if lossless && h.NICQueues == 0 {
		h.NICQueues = 1
	}
	if lossless && h.RTOMin == 0 {
		h.RTOMin = units.Duration(DefaultLosslessRTOMin)
	}
	if h.RTOMin != 0 && (h.RTOMin.D() < time.Millisecond || h.RTOMin.D() > MaxRTOMin) {
		p.add(h.Line, "hosts rto_min %v: use 1ms-%v (or leave it out: the kernel's 200ms)", h.RTOMin.D(), MaxRTOMin)
	}
	if h.NICQueues == 0 {
		h.NICQueues = DefaultNICQueues
	}
	if h.NICQueues < 1 || h.NICQueues > MaxNICQueues {
		p.add(h.Line, "hosts nic_queues %d is outside 1..%d", h.NICQueues, MaxNICQueues)
	}
	if h.InitRwnd != 0 && (h.InitRwnd < 64<<10 || h.InitRwnd > 16<<20) {
		p.add(h.Line, "hosts init_rwnd %v: use 64KiB-16MiB (or leave it out: the kernel's 64 KB)", h.InitRwnd)
	}
	if h.GSOMaxSize != 0 && (h.GSOMaxSize < topology.MTU || h.GSOMaxSize > MaxGSOSize) {
		p.add(h.Line, "hosts gso_max_size %v: use %dB-%dB (an IPv4 GSO packet is at most 64 KiB; below one MTU nothing is sent)", h.GSOMaxSize, topology.MTU, MaxGSOSize)
	}
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

// UnmarshalYAML: decodeNoted (validate requires both fields).
func (c *TCD) UnmarshalYAML(n *yaml.Node) error {
	type plain TCD
	return decodeNoted(n, (*plain)(c), &c.Line, &c.set)
}

// UnmarshalYAML decodes strictly and remembers the line. A variant's
// marking is not its own field: say where it goes.
func (v *VariantSpec) UnmarshalYAML(n *yaml.Node) error {
	type plain VariantSpec
	v.Line = n.Line
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Value == "switch" || k.Value == "ecn_threshold" || k.Value == "ecn_red" || k.Value == "qcn" {
			return typeErr(k, "a variant's ECN marking goes in the switch section, its QCN too: switch: {ecn_profiles: {NAME: {ecn_threshold: ... | ecn_red: {...}, qcn: {...}}}}")
		}
	}
	if _, set := yamlerr.Lookup(n, "set"); set != nil {
		v.setLines = keyLines(set)
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

// keyLines maps each key of a mapping node to its line (nil for a node
// that is no mapping).
func keyLines(n *yaml.Node) map[string]int {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	out := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		out[n.Content[i].Value] = n.Content[i].Line
	}
	return out
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
	if _, set := yamlerr.Lookup(n, "set"); set != nil {
		en.setLines = keyLines(set)
	}
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

func checkCC(p *problems, line int, what, cc string) {
	if !ccName.MatchString(cc) {
		p.add(line, "%scongestion control %q: not a kernel congestion control name (at most 15 of a-z, 0-9, _)", what, cc)
	}
}

// validate checks what the file alone can tell and fills defaults,
// recording every error in p. Checks against the topology (host names)
// are done by the workload generator.
func (e *Experiment) validate(p *problems) {
	if e.Name == "" {
		p.add(e.Line, "missing name")
	}
	if e.Topology == "" {
		p.add(e.Line, "missing topology (a topology file path, relative to this file)")
	}
	if e.Seed == 0 {
		e.Seed = DefaultSeed
	}
	if e.CC == "" {
		e.CC = DefaultCC
	}
	checkCC(p, e.Line, "", e.CC)
	for _, name := range slices.Sorted(maps.Keys(e.Variants)) {
		v := e.Variants[name]
		checkCC(p, v.Line, "variant: ", name)
		if v.Law == "" {
			p.add(v.Line, "variant %s: no law (variants: {%s: {law: hpcc, set: {...}}})", name, name)
		}
		if v.Law == name {
			p.add(v.Line, "variant %s: named as its law; give it a name of its own", name)
		}
	}
	seen := map[string]bool{}
	for _, cc := range e.Compare {
		checkCC(p, e.Line, "", cc)
		if seen[cc] {
			p.add(e.Line, "compare lists %s twice", cc)
		}
		seen[cc] = true
	}
	if e.Timeout == 0 {
		e.Timeout = units.Duration(DefaultTimeout)
	}
	e.Hosts.validate(p, e.Switch != nil && e.Switch.PFC != nil)
	e.Switch.validate(p, &e.Hosts, e.Compare)
	switch e.Emulation.DelayEngine {
	case "", "auto", "netem", "line":
	default:
		p.add(e.Emulation.Line, "emulation delay_engine %q: use auto, netem or line", e.Emulation.DelayEngine)
	}
	switch e.Emulation.UserCPU {
	case "", "line", "any":
	default:
		p.add(e.Emulation.Line, "emulation user_cpu %q: use line or any", e.Emulation.UserCPU)
	}
	if e.Capture.Snaplen == 0 {
		e.Capture.Snaplen = DefaultSnaplen
	}
	if e.Capture.Snaplen < 64 || e.Capture.Snaplen > 65535 {
		p.add(e.Line, "capture snaplen %v: use 64B-65535B", e.Capture.Snaplen)
	}
	if len(e.Workload) == 0 {
		p.add(e.Line, "empty workload: list at least one entry")
	}
	if e.Watch != 0 && (e.Watch < units.Duration(10*time.Millisecond) || e.Watch > units.Duration(time.Minute)) {
		p.add(e.Line, "watch %v: record every 10ms to 1m (a sample of 16 hosts costs about 18 ms of CPU: docs/performance.md)", e.Watch)
	}
	e.validateEvents(p)
	names := map[string]int{}
	for i := range e.Workload {
		en := &e.Workload[i]
		if en.Name == "" {
			p.add(en.Line, "workload entry without a name")
		}
		if prev, dup := names[en.Name]; dup && en.Name != "" {
			p.add(en.Line, "workload entry %q already defined at line %d", en.Name, prev)
		}
		names[en.Name] = en.Line
		if en.CC != "" {
			checkCC(p, en.Line, "", en.CC)
		}
		switch en.Tool {
		case "", "inprocess":
			en.Tool = ""
		case "iperf3":
		default:
			p.add(en.Line, "workload entry %q: tool %q: use inprocess or iperf3", en.Name, en.Tool)
		}
		en.validate(p)
	}
	// The entries' variants are named from the names checked above.
	if p.empty() {
		e.addEntryVariants(p)
	}
	if p.empty() {
		e.validateLaws(p)
	}
}

// addEntryVariants makes the variant each entry's `set:` asks for in each
// run (EntryCC): the run's law, or the variant the run compares, with the
// entry's parameters on top.
func (e *Experiment) addEntryVariants(p *problems) {
	ccs := e.Compare
	if len(ccs) == 0 {
		ccs = []string{e.CC}
	}
	for i := range e.Workload {
		en := &e.Workload[i]
		if len(en.Set) == 0 {
			continue
		}
		bad := false
		for _, k := range slices.Sorted(maps.Keys(en.Set)) {
			if k == "" || strings.Contains(k, ".") {
				p.add(en.Line, "workload entry %q: set %q: give a parameter of the law (set: {init_rate_kbps: 100000})", en.Name, k)
				bad = true
			}
		}
		if bad {
			continue
		}
		for _, cc := range ccs {
			base := cc
			if en.CC != "" {
				base = en.CC
			}
			name := e.EntryCC(en, cc)
			if !ccName.MatchString(name) {
				p.add(en.Line, "workload entry %q sets law parameters, so its flows run as %q in the run of %s: not a kernel congestion control name (at most 15 of a-z, 0-9, _): shorten the entry's name", en.Name, name, cc)
				continue
			}
			if v, ok := e.Variants[name]; ok && v.Entry == "" {
				p.add(en.Line, "workload entry %q: its flows' variant %q is already a variant of the file", en.Name, name)
				continue
			} else if ok && v.Entry != en.Name {
				p.add(en.Line, "workload entry %q: its flows' variant %q is also entry %q's", en.Name, name, v.Entry)
				continue
			}
			if slices.Contains(ccs, name) {
				p.add(en.Line, "workload entry %q: its flows' variant %q is a compared name", en.Name, name)
				continue
			}
			v := VariantSpec{Law: base, Set: map[string]string{}, Entry: en.Name, Line: en.Line, setLines: map[string]int{}}
			if own, ok := e.Variants[base]; ok {
				v.Law = own.Law
				maps.Copy(v.Set, own.Set)
				maps.Copy(v.setLines, own.setLines)
			}
			maps.Copy(v.Set, en.Set)
			maps.Copy(v.setLines, en.setLines)
			if e.Variants == nil {
				e.Variants = map[string]VariantSpec{}
			}
			e.Variants[name] = v
		}
	}
}

func (en *Entry) validate(p *problems) {
	kinds := 0
	for _, set := range []bool{en.Long != nil, en.Incast != nil, en.Poisson != nil, en.Query != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		p.add(en.Line, "workload entry %q: give exactly one of long, incast, poisson, query", en.Name)
		return
	}
	switch {
	case en.Long != nil:
		en.Long.validate(p, en.Name)
	case en.Incast != nil:
		en.Incast.validate(p, en.Name)
	case en.Poisson != nil:
		en.Poisson.validate(p, en.Name)
	default:
		en.Query.validate(p, en.Name)
	}
}

func window(p *problems, line int, name string, start, stop units.Duration) {
	if stop == 0 {
		p.add(line, "%s: missing stop (when the flows stop)", name)
	} else if stop <= start {
		p.add(line, "%s: stop %v is not after start %v", name, stop, start)
	}
}

// count checks a count before the generator loops over it.
func count(p *problems, line int, name, key string, n, most int, why string) {
	if n < 0 {
		p.add(line, "%s: %s %d is negative", name, key, n)
	} else if n > most {
		p.add(line, "%s: %s %d is above %d (%s)", name, key, n, most, why)
	}
}

func (l *Long) validate(p *problems, name string) {
	if l.Src == "" || l.Dst == "" {
		p.add(l.Line, "%s: long flows need src and dst", name)
	} else if l.Src == l.Dst {
		p.add(l.Line, "%s: src and dst are both %s", name, l.Src)
	}
	if l.Count == 0 {
		l.Count = 1
	}
	count(p, l.Line, name, "count", l.Count, MaxParallel, "parallel flows between two hosts each take a source port of their own")
	window(p, l.Line, name, l.Start, l.Stop)
}

func (in *Incast) validate(p *problems, name string) {
	if in.Dst == "" {
		p.add(in.Line, "%s: incast needs dst (the receiver)", name)
	}
	count(p, in.Line, name, "fan_in", in.FanIn, topology.MaxHosts, "the address plan's hosts")
	switch {
	case len(in.Senders) > 0 && in.FanIn != 0 && in.FanIn != len(in.Senders):
		p.add(in.Line, "%s: fan_in %d but %d senders listed", name, in.FanIn, len(in.Senders))
	case len(in.Senders) == 0 && in.FanIn <= 0:
		p.add(in.Line, "%s: incast needs fan_in > 0 or a list of senders", name)
	}
	for _, s := range in.Senders {
		if s == in.Dst {
			p.add(in.Line, "%s: %s is both sender and receiver", name, s)
		}
	}
	if in.Size == 0 {
		p.add(in.Line, "%s: incast needs size (bytes each sender sends)", name)
	}
	if in.PerStagger == 0 {
		in.PerStagger = 1
	}
	count(p, in.Line, name, "per_stagger", in.PerStagger, topology.MaxHosts, "the address plan's hosts")
	if in.Repeat == 0 {
		in.Repeat = 1
	}
	count(p, in.Line, name, "repeat", in.Repeat, MaxEntryFlows, "flows the run and its analysis hold")
	if in.Repeat > 1 && in.Every == 0 {
		p.add(in.Line, "%s: repeat %d needs every (the period)", name, in.Repeat)
	}
	if flows := max(in.FanIn, len(in.Senders)) * in.Repeat; in.Repeat > 0 && in.Repeat <= MaxEntryFlows && flows > MaxEntryFlows {
		p.add(in.Line, "%s: %d flows (fan_in x repeat), above %d (flows the run and its analysis hold)", name, flows, MaxEntryFlows)
	}
}

func (po *Poisson) validate(p *problems, name string) {
	if po.CDF == "" {
		p.add(po.Line, "%s: poisson needs cdf (websearch, fb_hadoop or a file)", name)
	}
	if po.Load <= 0 {
		p.add(po.Line, "%s: poisson needs load > 0 (e.g. \"30%%\")", name)
	}
	window(p, po.Line, name, po.Start, po.Stop)
}

func (q *Query) validate(p *problems, name string) {
	if q.Rate <= 0 || math.IsNaN(q.Rate) || math.IsInf(q.Rate, 0) {
		p.add(q.Line, "%s: query needs rate > 0 (queries per second)", name)
	}
	if q.FanIn <= 0 {
		p.add(q.Line, "%s: query needs fan_in > 0", name)
	}
	count(p, q.Line, name, "fan_in", q.FanIn, topology.MaxHosts, "the address plan's hosts")
	if q.Size == 0 {
		p.add(q.Line, "%s: query needs size (bytes each answer carries)", name)
	}
	window(p, q.Line, name, q.Start, q.Stop)
	// The queries expected over the window, each FanIn flows.
	if q.Rate > 0 && q.FanIn > 0 && q.Stop > q.Start {
		if flows := q.Rate * (q.Stop - q.Start).D().Seconds() * float64(q.FanIn); flows > MaxEntryFlows {
			p.add(q.Line, "%s: about %.0f flows (rate x (stop - start) x fan_in), above %d (flows the run and its analysis hold)", name, flows, MaxEntryFlows)
		}
	}
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
func (sw *Switch) validate(p *problems, h *Hosts, compare []string) {
	if sw == nil {
		return
	}
	if sw.set["ecn_threshold"] && sw.set["ecn_red"] {
		p.add(sw.Line, "switch: ecn_threshold and ecn_red both given; a port marks one way (give one, or per compared name in ecn_profiles)")
	}
	checkThreshold(p, sw.Line, "switch ecn_threshold", sw.ECNThreshold)
	sw.ECNRed.validate(p)
	sw.QCN.validate(p, sw.INT)
	sw.TCD.validate(p, sw.INT)
	if sw.INTAll && !sw.INT {
		p.add(sw.Line, "switch: int_all without int: true stamps nothing")
	}
	sw.PFC.validate(p)
	for _, name := range slices.Sorted(maps.Keys(sw.ECNProfiles)) {
		prof := sw.ECNProfiles[name]
		if !slices.Contains(compare, name) {
			p.add(prof.Line, "switch ecn_profiles: %s is not compared (compare: [%s]); a profile is for a name in compare", name, strings.Join(compare, ", "))
		}
		if prof.set["ecn_threshold"] && prof.set["ecn_red"] {
			p.add(prof.Line, "switch ecn_profiles %s: ecn_threshold and ecn_red both given; a port marks one way", name)
		}
		if !prof.set["ecn_threshold"] && !prof.set["ecn_red"] && !prof.set["qcn"] {
			p.add(prof.Line, "switch ecn_profiles %s: give ecn_threshold (0B: no marking) or ecn_red, and/or qcn", name)
		}
		checkThreshold(p, prof.Line, "switch ecn_profiles "+name+" ecn_threshold", prof.ECNThreshold)
		prof.ECNRed.validate(p)
		prof.QCN.validate(p, sw.INT)
	}
	if sw.QueueSample == 0 {
		sw.QueueSample = units.Duration(DefaultQueueSample)
	}
	if d := sw.QueueSample.D(); d < MinQueueSample || d > MaxQueueSample {
		p.add(sw.Line, "queue_sample %v is outside %v..%v", d, MinQueueSample, MaxQueueSample)
	}
	if sw.INT && h.TCPTimestamps == nil {
		off := false
		h.TCPTimestamps = &off
	}
}

// checkThreshold refuses a marking threshold above the largest port buffer
// a topology may have: a queue never reaches it, so it would never mark.
func checkThreshold(p *problems, line int, what string, b units.Size) {
	if b > topology.MaxBuffer {
		p.add(line, "%s %v is above %v, the largest port buffer (topology.MaxBuffer): no queue reaches it", what, b, topology.MaxBuffer)
	}
}

// validate fills QCN's default sampling interval and checks the
// congestion point; its feedback rides in the INT option, so INT must be on.
func (q *QCN) validate(p *problems, intOn bool) {
	if q == nil {
		return
	}
	if !q.set["qeq"] || q.Qeq == 0 {
		p.add(q.Line, "qcn: give qeq, the equilibrium queue (the QCN paper's testbed: 64KB at 1 Gbit/s)")
	}
	if !intOn {
		p.add(q.Line, "qcn: the congestion point's feedback rides in the INT option: set int: true in the switch section")
	}
	if !q.set["sample"] {
		q.Sample = DefaultQCNSample
	}
	const most = units.Size(1 << 29)
	if q.Sample == 0 || q.Sample > most || q.Qeq > most {
		p.add(q.Line, "qcn: qeq %v and sample %v must be in 1B..%v", q.Qeq, q.Sample, most)
	}
}

// validate checks TCD's two values, both required; its U rides in the INT
// option, so INT must be on.
func (c *TCD) validate(p *problems, intOn bool) {
	if c == nil {
		return
	}
	if !c.set["max_ton"] || !c.set["threshold"] {
		p.add(c.Line, "tcd: give max_ton, max(T_on), and threshold, the queue K above which a port is undetermined or congested (the TCD fragment gives neither: docs/lossless.md)")
		return
	}
	if !intOn {
		p.add(c.Line, "tcd: the undetermined mark (U) rides in the INT option: set int: true in the switch section")
	}
	if c.MaxTon.D() <= 0 || c.MaxTon.D() > MaxTCDMaxTon {
		p.add(c.Line, "tcd: max_ton %v is outside 1ns..%v", c.MaxTon.D(), MaxTCDMaxTon)
	}
	if c.Threshold == 0 {
		p.add(c.Line, "tcd: threshold must be above 0B")
	}
	checkThreshold(p, c.Line, "tcd threshold", c.Threshold)
}

// MaxTCDMaxTon bounds TCD's max(T_on): far above any pause pattern here
// (a 1 ms link's ON-OFF period is milliseconds).
const MaxTCDMaxTon = 10 * time.Second

// validate fills RED's default pmax and checks the profile. Kmin and
// Kmax have no default: the papers' bytes are for their rates and delays,
// and a time-scaled fabric keeps them in BDPs, not in proportion to its
// port rates (docs/scaling.md).
func (r *RED) validate(p *problems) {
	if r == nil {
		return
	}
	if !r.set["kmin"] || !r.set["kmax"] {
		p.add(r.Line, "ecn_red: give kmin and kmax (HPCC's DCQCN marking is 100KB/400KB at 25 Gbit/s with its delays: scale them as the fabric is scaled, docs/scaling.md)")
		return
	}
	if !r.set["pmax"] {
		r.Pmax = DefaultREDPmax
	}
	if r.Kmin >= r.Kmax {
		p.add(r.Line, "ecn_red: kmin %v is not below kmax %v", r.Kmin, r.Kmax)
	}
	if r.Rate == 0 {
		checkThreshold(p, r.Line, "ecn_red: kmax", r.Kmax)
	}
	if r.Pmax < 1e-6 {
		p.add(r.Line, "ecn_red: pmax %v: the probability of marking at kmax must be above 0 (at most 1; e.g. 0.2 or \"20%%\")", float64(r.Pmax))
	}
}
