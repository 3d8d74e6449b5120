package pfc

import "cclab/tcopt/intswitch"

// A Change is one pause or resume the controller applied to an upstream
// egress: the run's pause timeline (the runner writes it as pfc.csv).
// Times are CLOCK_MONOTONIC ns.
type Change struct {
	// Node, Iface is the egress paused or resumed; PeerNode, PeerIface
	// the downstream ingress whose crossing asked for it.
	Node, Iface         string
	PeerNode, PeerIface string
	Pause               bool
	// CrossingNs is when the switch saw the crossing, DueNs that plus the
	// link's delay (the pause frame's flight), DoneNs when the change
	// was in force (its TBF request returned). 0 for the resumes at
	// stop, which no crossing asked for.
	CrossingNs, DueNs, DoneNs int64
	// Hop is the pause's spread: 1 + the most hops of the paused
	// switch's own egress pauses when the crossing was read (0: a
	// resume).
	Hop int
	// AtStop marks a resume of a port still paused when the controller
	// stopped.
	AtStop bool
}

// change is rec as a Change of upstream u.
func change(u Upstream, rec ctlRec) Change {
	return Change{Node: u.Ingress.PeerNode, Iface: u.Ingress.PeerIface, PeerNode: u.Ingress.Node, PeerIface: u.Ingress.Iface,
		Pause: rec.kind == intswitch.PFCXoff, CrossingNs: rec.crossing, DueNs: rec.due, DoneNs: rec.done, Hop: rec.hop}
}

// stopResume is the resume of upstream u at stop, in force at t.
func stopResume(u Upstream, t int64) Change {
	return Change{Node: u.Ingress.PeerNode, Iface: u.Ingress.PeerIface, PeerNode: u.Ingress.Node, PeerIface: u.Ingress.Iface,
		DoneNs: t, AtStop: true}
}
