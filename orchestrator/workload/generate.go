package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"cclab/orchestrator/experiment"
	"cclab/topology"
)

// A Flow is one TCP connection of the workload.
type Flow struct {
	ID    int           `json:"id"`
	Group string        `json:"group"` // the workload entry it came from
	Src   string        `json:"src"`
	Dst   string        `json:"dst"`
	Size  uint64        `json:"size"`  // payload bytes; 0 for a long-lived flow
	Start time.Duration `json:"start"` // after the workload starts
	Stop  time.Duration `json:"stop"`  // long-lived flows send until then
	CC    string        `json:"cc"`
	Tool  string        `json:"tool,omitempty"` // "" in-process, or "iperf3"
}

// Long reports whether the flow sends until Stop rather than a size.
func (f Flow) Long() bool { return f.Size == 0 }

// Generate expands the experiment's workload over the plan's hosts. cc is
// the congestion control of entries that do not pin their own (the
// experiment's default, or the compared one). Errors name the file and line.
func Generate(e *experiment.Experiment, p *topology.Plan, cc string) ([]Flow, error) {
	g := gen{e: e, p: p}
	for i := range e.Workload {
		en := &e.Workload[i]
		flowCC := e.EntryCC(en, cc)
		// One stream per entry, so adding an entry does not change the others.
		rng := rand.New(rand.NewPCG(uint64(e.Seed), uint64(i)+1))
		var err error
		before := len(g.flows)
		switch {
		case en.Long != nil:
			err = g.long(en, en.Long, flowCC)
		case en.Incast != nil:
			err = g.incast(en, en.Incast, flowCC, rng)
		case en.Poisson != nil:
			err = g.poisson(en, en.Poisson, flowCC, rng)
		case en.Query != nil:
			err = g.query(en, en.Query, flowCC, rng)
		}
		if err != nil {
			return nil, err
		}
		for j := before; j < len(g.flows); j++ {
			g.flows[j].Tool = en.Tool
		}
	}
	slices.SortStableFunc(g.flows, func(a, b Flow) int {
		switch {
		case a.Start < b.Start:
			return -1
		case a.Start > b.Start:
			return 1
		}
		return 0
	})
	for i := range g.flows {
		g.flows[i].ID = i
	}
	return g.flows, nil
}

type gen struct {
	e     *experiment.Experiment
	p     *topology.Plan
	flows []Flow
}

func (g *gen) errAt(line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", g.e.File, line, fmt.Sprintf(format, args...))
}

func (g *gen) host(line int, name string) error {
	n, ok := g.p.Node(name)
	if !ok {
		return g.errAt(line, "no node %q in topology %s", name, g.p.Name)
	}
	if n.Role != topology.Host {
		return g.errAt(line, "%s is a %s, not a host", name, n.Role)
	}
	return nil
}

// hostSet resolves a list of host names; empty or ["all"] means every host.
func (g *gen) hostSet(line int, names []string) ([]string, error) {
	if len(names) == 0 || (len(names) == 1 && names[0] == "all") {
		var all []string
		for _, h := range g.p.Hosts() {
			all = append(all, h.Name)
		}
		if len(all) < 2 {
			return nil, g.errAt(line, "topology %s has fewer than two hosts", g.p.Name)
		}
		return all, nil
	}
	for _, h := range names {
		if err := g.host(line, h); err != nil {
			return nil, err
		}
	}
	if len(names) < 2 {
		return nil, g.errAt(line, "need at least two hosts")
	}
	return names, nil
}

// others returns hosts other than dst in a seeded random order.
func (g *gen) others(dst string, rng *rand.Rand) []string {
	var out []string
	for _, h := range g.p.Hosts() {
		if h.Name != dst {
			out = append(out, h.Name)
		}
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func (g *gen) long(en *experiment.Entry, l *experiment.Long, cc string) error {
	for _, h := range []string{l.Src, l.Dst} {
		if err := g.host(l.Line, h); err != nil {
			return err
		}
	}
	for range l.Count {
		g.flows = append(g.flows, Flow{Group: en.Name, Src: l.Src, Dst: l.Dst, Start: l.Start.D(), Stop: l.Stop.D(), CC: cc})
	}
	return nil
}

// incast: senders are the listed ones, or fan_in others in seeded random
// order, cycling when fan_in exceeds the hosts available.
func (g *gen) incast(en *experiment.Entry, in *experiment.Incast, cc string, rng *rand.Rand) error {
	if err := g.host(in.Line, in.Dst); err != nil {
		return err
	}
	senders := in.Senders
	for _, s := range senders {
		if err := g.host(in.Line, s); err != nil {
			return err
		}
	}
	if len(senders) == 0 {
		pool := g.others(in.Dst, rng)
		if len(pool) == 0 {
			return g.errAt(in.Line, "%s: no other host to send to %s", en.Name, in.Dst)
		}
		for i := range in.FanIn {
			senders = append(senders, pool[i%len(pool)])
		}
	}
	for r := range in.Repeat {
		base := in.Start.D() + time.Duration(r)*in.Every.D()
		for i, s := range senders {
			start := base + time.Duration(i/in.PerStagger)*in.Stagger.D()
			g.flows = append(g.flows, Flow{Group: en.Name, Src: s, Dst: in.Dst, Size: uint64(in.Size), Start: start, CC: cc})
		}
	}
	return nil
}

// MeanGap is the mean time between flow starts of one host: the host's
// link carries load of its rate on average.
func MeanGap(meanSize float64, hostBps uint64, load float64) time.Duration {
	return time.Duration(8 * meanSize / (float64(hostBps) * load) * 1e9)
}

func (g *gen) hostRate(line int, h string) (uint64, error) {
	_, l, ok := g.p.HostPort(h)
	if !ok || l.Rate == 0 {
		return 0, g.errAt(line, "host %s has no link with a rate", h)
	}
	return l.Rate.BitsPerSecond(), nil
}

func (g *gen) poisson(en *experiment.Entry, po *experiment.Poisson, cc string, rng *rand.Rand) error {
	cdf, err := LoadCDF(po.CDF)
	if err != nil {
		return g.errAt(po.Line, "%s: %v", en.Name, err)
	}
	hosts, err := g.hostSet(po.Line, po.Hosts)
	if err != nil {
		return err
	}
	mean := cdf.Mean()
	for _, src := range hosts {
		bps, err := g.hostRate(po.Line, src)
		if err != nil {
			return err
		}
		gap := float64(MeanGap(mean, bps, float64(po.Load)))
		t := po.Start.D()
		for {
			t += time.Duration(rng.ExpFloat64() * gap)
			if t >= po.Stop.D() {
				break
			}
			dst := hosts[rng.IntN(len(hosts)-1)]
			if dst == src { // uniform over the other hosts
				dst = hosts[len(hosts)-1]
			}
			g.flows = append(g.flows, Flow{Group: en.Name, Src: src, Dst: dst, Size: cdf.Sample(rng), Start: t, CC: cc})
		}
	}
	return nil
}

func (g *gen) query(en *experiment.Entry, q *experiment.Query, cc string, rng *rand.Rand) error {
	hosts, err := g.hostSet(q.Line, q.Hosts)
	if err != nil {
		return err
	}
	gap := 1e9 / q.Rate
	t := q.Start.D()
	for {
		t += time.Duration(rng.ExpFloat64() * gap)
		if t >= q.Stop.D() || math.IsInf(gap, 0) {
			break
		}
		agg := hosts[rng.IntN(len(hosts))]
		var pool []string
		for _, h := range hosts {
			if h != agg {
				pool = append(pool, h)
			}
		}
		rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
		for i := range q.FanIn {
			g.flows = append(g.flows, Flow{Group: en.Name, Src: pool[i%len(pool)], Dst: agg, Size: uint64(q.Size), Start: t, CC: cc})
		}
	}
	return nil
}
