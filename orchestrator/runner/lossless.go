package runner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"cclab/internal/units"
	"cclab/orchestrator/experiment"
	"cclab/orchestrator/fidelity"
	"cclab/orchestrator/netbuild"
	"cclab/orchestrator/pfc"
	"cclab/rundir"
	"cclab/tcopt/intswitch"
	"cclab/topology"
)

// checkLossless checks, before anything is built, that the topology can
// carry the experiment's PFC (docs/lossless.md): every link holds its own
// delay, so that a pause lands one link delay after its trigger and a
// delayed packet keeps its ingress port; no switch has more ports than
// the switch counts; no link event changes a lossless port's rate.
func checkLossless(exp *experiment.Experiment, plan *topology.Plan) error {
	if exp.Switch == nil || exp.Switch.PFC == nil {
		return nil
	}
	line := exp.Switch.PFC.Line
	if plan.DelayPlacement != topology.PlaceLink {
		return fmt.Errorf("%s:%d: switch pfc: topology %s holds each path's whole delay at its last switch port (placement %q); a lossless fabric needs each link to hold its own: give `delay: {placement: link}` in the topology file (docs/lossless.md)",
			exp.File, line, plan.Name, placementName(plan.DelayPlacement))
	}
	ports := map[string]int{}
	for _, e := range plan.Egress() {
		if e.Role == topology.Switch {
			ports[e.Node]++
			if ports[e.Node] > intswitch.MaxPFCPorts {
				return fmt.Errorf("%s:%d: switch pfc: switch %s has more than %d ports, which a lossless switch cannot count", exp.File, line, e.Node, intswitch.MaxPFCPorts)
			}
		}
	}
	for _, c := range exp.LinkChanges() {
		if c.Rate != 0 || c.Buffer != 0 {
			return fmt.Errorf("%s:%d: switch pfc: link event at %v changes a rate or buffer; a lossless port's TBF cannot change them yet (docs/lossless.md, \"What is missing\")", exp.File, c.Line, c.At.D())
		}
	}
	return nil
}

func placementName(p string) string {
	if p == "" {
		return topology.PlacePath
	}
	return p
}

// losslessHosts turns the build options lossless when the experiment has
// PFC: pausable TBF ports, and the switches' shared buffer as their
// ports' FIFO limit.
func losslessHosts(o *netbuild.Options, exp *experiment.Experiment) {
	if exp.Switch == nil || exp.Switch.PFC == nil {
		return
	}
	o.Lossless = true
	o.SharedBuffer = exp.Switch.PFC.Buffer
}

// pfcSettings is the experiment's PFC as the switch takes it. An "auto"
// headroom is autoHeadroom's (one value for the fabric: the switch has
// one headroom).
func pfcSettings(f *experiment.PFC, plan *topology.Plan) intswitch.PFC {
	if f == nil {
		return intswitch.PFC{}
	}
	p := intswitch.PFC{Xoff: f.Xoff, Xon: f.Xon, Alpha: float64(f.Alpha), Hysteresis: f.Hysteresis, Buffer: f.Buffer, Headroom: f.Headroom.Bytes}
	switch f.Mode {
	case experiment.PFCStatic:
		p.Mode = intswitch.PFCStatic
	case experiment.PFCDynamic:
		p.Mode = intswitch.PFCDynamic
	}
	if f.Headroom.Auto {
		p.Headroom = autoHeadroom(plan)
	}
	return p
}

// autoHeadroom is the largest headroom the plan's links into a switch
// need: the model's 2 x delay x rate + 2 MTU (intswitch.Headroom), and
// the emulated port's own excess, the TBF's burst (netbuild.TBFBurst),
// which a resumed port sends above the link rate (a real port resumes at
// it). docs/lossless.md, "Headroom".
func autoHeadroom(plan *topology.Plan) units.Size {
	isSwitch := map[string]bool{}
	for _, n := range plan.Nodes {
		isSwitch[n.Name] = n.Role == topology.Switch
	}
	var h units.Size
	for _, l := range plan.Links {
		if isSwitch[l.A.Node] || isSwitch[l.B.Node] {
			h = max(h, intswitch.Headroom(l.Delay.D(), l.Rate)+netbuild.TBFBurst)
		}
	}
	return h
}

// minLinkDelay is the smallest delay of a link into a switch: the pause
// lateness bars scale with it.
func minLinkDelay(plan *topology.Plan) time.Duration {
	var d time.Duration = -1
	for _, l := range plan.Links {
		if d < 0 || l.Delay.D() < d {
			d = l.Delay.D()
		}
	}
	return max(d, 0)
}

// losslessRun is the extension of a lossless run: the PFC controller,
// which applies the switch's crossings to the upstream ports, started
// after the switch (telemetry) and stopped before it. Its Stop records
// run.json's extensions.pfc and the verdict's inputs.
type losslessRun struct {
	cfg intswitch.PFC
	// lineCPU is the delay line's CPU, where the controller's thread
	// runs (pfc.Options).
	lineCPU int
	tel     *telemetry
	// out receives what the verdict judges (the variant's field).
	out **fidelity.Lossless

	ctl *pfc.Controller
	dir string // the variant's run directory (pfc.csv)
	net *netbuild.Network
	ups []pfc.Upstream
	// drops0 are the ports' qdisc drops when the controller started (the
	// calibration's traffic came before).
	drops0 map[[2]string]uint64
}

// PFCJSON is what run.json records under extensions.pfc: the settings,
// the controller's report (pauses per port, paused time, the longest
// pause, spread in hops, the apply lateness), each ingress port's
// crossings as the switch counted them, and every port's qdisc drops.
type PFCJSON struct {
	Mode          string     `json:"mode"`
	XoffBytes     units.Size `json:"xoff_bytes,omitempty"`
	XonBytes      units.Size `json:"xon_bytes,omitempty"`
	Alpha         float64    `json:"alpha,omitempty"`
	Hysteresis    units.Size `json:"hysteresis_bytes,omitempty"`
	BufferBytes   units.Size `json:"buffer_bytes,omitempty"`
	HeadroomBytes units.Size `json:"headroom_bytes"`
	HeadroomAuto  bool       `json:"headroom_auto"`
	pfc.Report
	// Ingress is every lossless ingress port's account: crossings, lost
	// events, the most its queue went above Xoff.
	Ingress    []PFCIngressJSON     `json:"ingress"`
	QdiscDrops []netbuild.PortQdisc `json:"qdisc_drops"` // ports that dropped during the workload
	// HeadroomOverruns counts ingress ports above Xoff + headroom.
	HeadroomOverruns int `json:"headroom_overruns"`
}

// PFCIngressJSON is one ingress port's PFC account.
type PFCIngressJSON struct {
	Node          string `json:"node"`
	Iface         string `json:"iface"`
	Xoffs         uint64 `json:"xoffs"`
	Xons          uint64 `json:"xons"`
	LostEvents    uint64 `json:"lost_events"`
	MaxOverBytes  uint64 `json:"max_over_bytes"`
	PausedAtStop  bool   `json:"paused_at_stop,omitempty"`
	OccupancyStop uint64 `json:"occupancy_at_stop_bytes,omitempty"`
}

func (*losslessRun) Name() string { return "pfc" }

func (x *losslessRun) Start(ctx context.Context, env *Env) error {
	if x.tel == nil || x.tel.sw == nil {
		return errors.New("the PFC controller needs the switch (switch: section)")
	}
	x.net, x.dir = env.Network, env.Dir
	qs, err := x.qdiscCounts()
	if err != nil {
		return err
	}
	x.drops0 = map[[2]string]uint64{}
	for _, q := range qs {
		x.drops0[[2]string{q.Node, q.Iface}] = q.Drops
	}
	if x.ups, err = pfc.Upstreams(env.Network, x.tel.ports); err != nil {
		return fmt.Errorf("PFC upstreams: %w", err)
	}
	if x.ctl, err = pfc.StartController(ctx, x.tel.sw, x.ups, pfc.Options{CPU: x.lineCPU}); err != nil {
		return fmt.Errorf("PFC controller: %w", err)
	}
	return nil
}

func (x *losslessRun) Stop(ctx context.Context) (any, error) {
	out := PFCJSON{Mode: x.cfg.Mode.String(), XoffBytes: x.cfg.Xoff, XonBytes: x.cfg.Xon, Alpha: x.cfg.Alpha,
		Hysteresis: x.cfg.Hysteresis, BufferBytes: x.cfg.Buffer, HeadroomBytes: x.cfg.Headroom, HeadroomAuto: x.headroomIsModel()}
	var errs []error
	if x.ctl != nil {
		rep, err := x.ctl.Stop()
		errs = append(errs, err)
		out.Report = rep
		x.ctl = nil
		errs = append(errs, writePFCChanges(x.dir, rep.Changes))
	}
	in := &fidelity.Lossless{Headroom: int64(x.cfg.Headroom), Auto: out.HeadroomAuto, LinkDelay: minLinkDelay(x.net.Plan),
		LostEvents: out.LostEvents, Lateness: fidelity.LatenessStats{N: out.Lateness.N,
			P50: time.Duration(out.Lateness.P50Ns), P99: time.Duration(out.Lateness.P99Ns), Max: time.Duration(out.Lateness.MaxNs)}}
	if ports, _, err := x.tel.sw.PFCPorts(); err != nil {
		errs = append(errs, err)
	} else {
		for _, p := range ports {
			out.Ingress = append(out.Ingress, PFCIngressJSON{Node: p.Node, Iface: p.Iface, Xoffs: p.Xoffs, Xons: p.Xons,
				LostEvents: p.LostEvents, MaxOverBytes: uint64(p.MaxOver), PausedAtStop: p.Paused, OccupancyStop: uint64(p.Occupancy)})
			if p.MaxOver > x.cfg.Headroom {
				out.HeadroomOverruns++
				in.Overruns = append(in.Overruns, fidelity.PortOverrun{Node: p.Node, Iface: p.Iface, Over: int64(p.MaxOver)})
			}
		}
	}
	qs, err := x.qdiscCounts()
	errs = append(errs, err)
	for _, q := range qs {
		q.Drops -= min(q.Drops, x.drops0[[2]string{q.Node, q.Iface}])
		if q.Drops > 0 {
			out.QdiscDrops = append(out.QdiscDrops, q)
			in.QdiscDrops = append(in.QdiscDrops, fidelity.PortDrops{Node: q.Node, Iface: q.Iface, Drops: q.Drops})
		}
	}
	*x.out = in
	return out, errors.Join(errs...)
}

// qdiscCounts reads every port's qdisc counters.
func (x *losslessRun) qdiscCounts() ([]netbuild.PortQdisc, error) {
	ch := x.net.Changer()
	defer ch.Close()
	return ch.QdiscCounts()
}

// headroomIsModel says whether the headroom is the model's: the file's
// "auto".
func (x *losslessRun) headroomIsModel() bool {
	return x.tel != nil && x.tel.cfg.PFC != nil && x.tel.cfg.PFC.Headroom.Auto
}

// writePFCChanges writes the controller's changes as the run directory's
// pfc.csv (the pause timeline).
func writePFCChanges(dir string, changes []pfc.Change) error {
	rows := make([]rundir.PFCChange, 0, len(changes))
	for _, c := range changes {
		ev := rundir.PFCResume
		switch {
		case c.Pause:
			ev = rundir.PFCPause
		case c.AtStop:
			ev = rundir.PFCResumeAtStop
		}
		rows = append(rows, rundir.PFCChange{TimeNs: c.DoneNs, Node: c.Node, Iface: c.Iface, Event: ev,
			PeerNode: c.PeerNode, PeerIface: c.PeerIface, CrossingNs: c.CrossingNs, DueNs: c.DueNs, Hop: c.Hop})
	}
	if err := rundir.WritePFCChanges(filepath.Join(dir, rundir.PFCCSV), rows); err != nil {
		return fmt.Errorf("pfc changes: %w", err)
	}
	return nil
}
