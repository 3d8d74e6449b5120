package runner

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"cclab/kmod/law"
	"cclab/kmod/lawload"
	"cclab/orchestrator/experiment"
	"cclab/orchestrator/flows"
	"cclab/orchestrator/workload"
	"cclab/topology"
)

// A Variant is one run of the experiment: every flow uses CC, but those of
// an entry that pins its own congestion control or sets law parameters of
// its own (experiment.Experiment.EntryCC).
type Variant struct {
	CC    string
	Flows []workload.Flow
}

// Prepared is an experiment checked against the topology and the kernel,
// with its flows generated: everything short of creating anything.
type Prepared struct {
	Exp      *experiment.Experiment
	Source   []byte
	Plan     *topology.Plan
	Variants []Variant
	// Skipped lists the compared congestion controls that are known but
	// not available in this kernel, and why (only with skip_missing).
	Skipped []Skip
	// Laws are cclab's laws the run registers itself, with the
	// experiment's `laws:` parameters, before it builds anything.
	Laws []string
	// VariantNames are the experiment's variants the run uses (each
	// registered under its name as its law, with its own settings).
	VariantNames []string
}

// derivedLaws are the laws the calibration derives parameters for: those
// registered under their names and the variants' laws.
func (p *Prepared) derivedLaws() []string {
	out := slices.Clone(p.Laws)
	for _, n := range p.VariantNames {
		if l := p.Exp.Variants[n].Law; !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// Prepare reads the experiment and its topology, checks every congestion
// control against tcp_available_congestion_control and generates the
// flows of each variant.
func Prepare(path string) (*Prepared, error) {
	p, err := read(path)
	if err != nil {
		return nil, err
	}
	avail, err := AvailableCCs()
	if err != nil {
		return nil, err
	}
	if err := p.generate(avail); err != nil {
		return nil, err
	}
	return p, nil
}

// read reads and checks the experiment file and its topology.
func read(path string) (*Prepared, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("experiment: %w", err)
	}
	exp, err := experiment.Parse(path, src)
	if err != nil {
		return nil, err
	}
	plan, err := exp.LoadTopology()
	if err != nil {
		return nil, err
	}
	return &Prepared{Exp: exp, Source: src, Plan: plan}, nil
}

// generate checks the experiment's congestion controls against avail,
// the names the kernel has, and generates the flows of each variant.
func (p *Prepared) generate(avail map[string]bool) error {
	exp, plan, path := p.Exp, p.Plan, p.Exp.File
	ccs := exp.Compare
	if len(ccs) == 0 {
		ccs = []string{exp.CC}
	}
	if err := checkCompared(exp, avail); err != nil {
		return err
	}
	if exp.Laws != nil || len(exp.Variants) > 0 {
		p.lawsToRegister(ccs, avail)
	}
	for i, cc := range ccs {
		if avail[cc] {
			continue
		}
		if exp.SkipMissing && len(exp.Compare) > 0 {
			p.Skipped = append(p.Skipped, Skip{CC: cc, Reason: skipReason(exp, cc)})
			continue
		}
		line := exp.Line
		if len(exp.Compare) > 0 {
			line = exp.CompareLine(i)
		}
		return fmt.Errorf("%s:%d: congestion control %q is not loaded in this kernel (available: %s)%s", path, line, cc, names(avail), loadHint(cc))
	}
	for _, en := range exp.Workload {
		for _, cc := range ccs {
			if ecc := exp.EntryCC(&en, cc); ecc != cc && !avail[ecc] {
				return fmt.Errorf("%s:%d: workload entry %q: congestion control %q is not loaded in this kernel (available: %s)%s", path, en.Line, en.Name, ecc, names(avail), loadHint(ecc))
			}
		}
	}
	// Every compared name's flows are generated and judged, and every
	// problem reported once, at its line.
	var errs []error
	seen := map[string]bool{}
	problem := func(err error) {
		if !seen[err.Error()] {
			seen[err.Error()] = true
			errs = append(errs, err)
		}
	}
	for _, cc := range ccs {
		if slices.Contains(skippedNames(p.Skipped), cc) {
			continue
		}
		fl, err := workload.Generate(exp, plan, cc)
		if err != nil {
			problem(err)
			continue
		}
		if len(fl) == 0 {
			problem(fmt.Errorf("%s:%d: the workload generates no flows", path, exp.Line))
			continue
		}
		for _, f := range fl {
			if f.Tool == flows.Iperf3 && usesECN(exp, f.CC) {
				problem(fmt.Errorf("%s:%d: %s runs iperf3 flows (workload entry %q): iperf3's listener cannot run an ECN law, and a receiver that does not refuses the ECN its senders ask for (docs/experiments.md); use tool: inprocess", path, entryLine(exp, f.Group), f.CC, f.Group))
			}
			if l, ok := lawOf(exp, f.CC); ok && l.UsesQCN() && !hasQCN(exp, cc) {
				problem(fmt.Errorf("%s:%d: %s's run has %s flows (workload entry %q) and no QCN congestion point to send them feedback: give switch: {int: true, qcn: {qeq: ...}} (or ecn_profiles.%s.qcn)", path, entryLine(exp, f.Group), cc, f.CC, f.Group, cc))
			}
		}
		p.Variants = append(p.Variants, Variant{CC: cc, Flows: fl})
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if len(p.Variants) == 0 {
		return fmt.Errorf("%s: none of the compared congestion controls is loaded (%s); `cclab cc load` loads cclab's laws", path, strings.Join(skippedNames(p.Skipped), ", "))
	}
	if err := checkLinkEvents(exp, plan); err != nil {
		return err
	}
	if err := checkLossless(exp, plan); err != nil {
		return err
	}
	if exp.Switch != nil {
		if err := checkMarkings(exp, plan, ccs); err != nil {
			return err
		}
	}
	return nil
}

// entryLine is the line of the workload entry named name (the file's own
// line when there is none).
func entryLine(exp *experiment.Experiment, name string) int {
	for _, en := range exp.Workload {
		if en.Name == name {
			return en.Line
		}
	}
	return exp.Line
}

// usesECN reports whether cc is one of cclab's ECN laws, by its own name
// or as a variant of one.
func usesECN(exp *experiment.Experiment, cc string) bool {
	l, ok := lawOf(exp, cc)
	return ok && l.UsesECN()
}

// lawOf is the cclab law cc is, by its own name or as a variant of one.
func lawOf(exp *experiment.Experiment, cc string) (law.Law, bool) {
	name := cc
	if v, ok := exp.Variants[cc]; ok {
		name = v.Law
	}
	l, err := law.ParseLaw(name)
	return l, err == nil
}

// stampsINT reports whether a run whose flows use the congestion controls
// ccs stamps INT: the switch has INT on and one of their laws reads it
// (law.UsesINT; a workload entry may pin one in another's run), or int_all
// asks for it in every run, or TCD is on (its U rides in the INT option
// whatever the law).
func stampsINT(exp *experiment.Experiment, ccs []string) bool {
	if exp.Switch == nil || !exp.Switch.INT {
		return false
	}
	if exp.Switch.INTAll || exp.Switch.TCD != nil {
		return true
	}
	return slices.ContainsFunc(ccs, func(cc string) bool {
		l, ok := lawOf(exp, cc)
		return ok && l.UsesINT()
	})
}

// hasQCN reports whether the switch's ports are congestion points in the
// run of compared name cc.
func hasQCN(exp *experiment.Experiment, cc string) bool {
	if exp.Switch == nil {
		return false
	}
	p, _ := exp.Switch.Profile(cc)
	return p.QCN != nil
}

func loadHint(cc string) string {
	if slices.Contains(lawload.Laws(), cc) {
		return "; `cclab cc load " + cc + "` loads it"
	}
	return ""
}

// lawsToRegister handles an experiment's `laws:` section and variants:
// every cclab law the experiment uses will be registered by the run (with
// the settings experiment.Parse typed and checked against the law table),
// so it counts as available.
func (p *Prepared) lawsToRegister(ccs []string, avail map[string]bool) {
	used := slices.Clone(ccs)
	for _, en := range p.Exp.Workload {
		for _, cc := range ccs {
			used = append(used, p.Exp.EntryCC(&en, cc))
		}
	}
	for _, cc := range used {
		if _, ok := p.Exp.Variants[cc]; ok {
			if !slices.Contains(p.VariantNames, cc) {
				p.VariantNames = append(p.VariantNames, cc)
			}
			avail[cc] = true
			continue
		}
		if slices.Contains(lawload.Laws(), cc) && !slices.Contains(p.Laws, cc) {
			p.Laws = append(p.Laws, cc)
		}
	}
	for _, l := range p.Laws {
		avail[l] = true
	}
}

// Reseed returns the experiment prepared with another workload seed: the
// same file, topology and variants, each variant's flows generated again
// (the reproduction suite runs a claim with several seeds).
func (p *Prepared) Reseed(seed int64) (*Prepared, error) {
	exp := *p.Exp
	exp.Seed = seed
	q := *p
	q.Exp = &exp
	q.Variants = nil
	for _, v := range p.Variants {
		fl, err := workload.Generate(&exp, p.Plan, v.CC)
		if err != nil {
			return nil, fmt.Errorf("seed %d: %w", seed, err)
		}
		q.Variants = append(q.Variants, Variant{CC: v.CC, Flows: fl})
	}
	return &q, nil
}
