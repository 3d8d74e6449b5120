package delay

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"

	"cclab/orchestrator/delay/line"
)

// Replace puts new delays in force on the running line while traffic
// flows: pl is the placement of the plan with its links' new delays
// (Place). It returns once the line applies them (within milliseconds);
// on error nothing changed.
//
// The take programs and sinks stay as plumbed, so pl may delay only what
// the line serves: its ports, and into each port only sources delayed
// there now (a path that had no delay when the line was built is refused:
// the port's take program never sends its packets to the line). A source
// delayed now that pl no longer delays (its path's delay became 0) gets a
// class of delay 0 at its port, and a port pl lacks (every path into its
// host lost its delay) gets only that class, so their packets stay in
// order. Packets held keep their due times; a source's packets never
// reorder (line.Line.Update).
func (s *Server) Replace(pl *Placement) error {
	if pl == nil {
		return fmt.Errorf("delay: replace: no placement")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next, err := replacement(s.pl, pl)
	if err != nil {
		return err
	}
	ups := make([]line.PortUpdate, len(next.Ports))
	for i, p := range next.Ports {
		ups[i] = line.PortUpdate{Classes: lineClasses(p), Sources: p.Sources}
	}
	if err := s.l.Update(ups); err != nil {
		return fmt.Errorf("delay: replace: %w", err)
	}
	s.l.SetTolerance(Tolerance(next))
	s.pl = next
	return nil
}

// replacement is what the line serves once pl replaces served: per port
// of served, in its order (the line's), pl's classes and sources, and a
// class of delay 0 for the sources pl no longer delays there.
func replacement(served, pl *Placement) (*Placement, error) {
	if pl.Link() != served.Link() && !pl.Empty() {
		return nil, fmt.Errorf("delay: replace: the line was plumbed for %s placement, not %s", modeName(served), modeName(pl))
	}
	byName := map[string]PortPlan{}
	for _, p := range pl.Ports {
		byName[p.Name()] = p
	}
	out := &Placement{Mode: served.Mode}
	for _, sp := range served.Ports {
		np, ok := byName[sp.Name()]
		delete(byName, sp.Name())
		if !ok {
			np = PortPlan{Node: sp.Node, Iface: sp.Iface, Host: sp.Host, Peer: sp.Peer}
		}
		pp, err := servedPort(sp, np)
		if err != nil {
			return nil, err
		}
		out.Ports = append(out.Ports, pp)
	}
	if len(byName) > 0 {
		names := make([]string, 0, len(byName))
		for n := range byName {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("delay: port %s had no delay when the line was built: it has no sink and no take program", names[0])
	}
	return out, nil
}

// servedPort is port sp of the line with np's classes and sources.
func servedPort(sp, np PortPlan) (PortPlan, error) {
	if len(np.Buffers) != len(np.Classes) {
		return PortPlan{}, fmt.Errorf("delay: port %s: %d classes but %d buffers", np.Name(), len(np.Classes), len(np.Buffers))
	}
	pp := PortPlan{
		Node: sp.Node, Iface: sp.Iface, Host: sp.Host, Peer: sp.Peer,
		Classes: slices.Clone(np.Classes), Buffers: slices.Clone(np.Buffers),
		Sources: make(map[netip.Addr]int, len(sp.Sources)),
	}
	for a, k := range np.Sources {
		if _, ok := sp.Sources[a]; !ok {
			return PortPlan{}, fmt.Errorf("delay: path from %s into %s had no delay when the line was built: the take program of %s does not send its packets to the line (its source map is filled at plumbing)", a, sp.Host, sp.Name())
		}
		pp.Sources[a] = k
	}
	zero := -1
	for a := range sp.Sources {
		if _, ok := np.Sources[a]; ok {
			continue
		}
		if zero < 0 {
			if zero = slices.Index(pp.Classes, 0); zero < 0 {
				zero = len(pp.Classes)
				pp.Classes = append(pp.Classes, 0)
				pp.Buffers = append(pp.Buffers, line.MinBuffer)
			}
		}
		pp.Sources[a] = zero
	}
	if len(pp.Classes) > line.MaxClasses {
		why := ""
		if len(np.Classes) <= line.MaxClasses {
			why = ", counting the class of delay 0 for its paths that lost theirs"
		}
		return PortPlan{}, fmt.Errorf("delay: port %s: %d classes, at most %d%s", sp.Name(), len(pp.Classes), line.MaxClasses, why)
	}
	return pp, nil
}
