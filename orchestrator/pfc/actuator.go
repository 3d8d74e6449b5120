// Package pfc applies a lossless fabric's pauses (docs/lossless.md):
// the switch (tcopt/intswitch, Config.PFC) detects each ingress port's
// Xoff and Xon crossings; the Controller (controller.go, its timing
// thread C: ctl.c) applies each one
// link delay after it to the port feeding that ingress, its Upstream
// (upstream.go, derived from a link-placed lossless netbuild network),
// through that port's Actuator: a pause and a resume of its TBF root
// (netbuild's Options.Lossless) and the kick a resume needs (kick.go).
// The controller writes a paused switch port's state into the switch
// (SetPaused), where TCD reads it, and reports pauses, paused time, the
// spread of pauses in hops and its own lateness (report.go).
package pfc

import (
	"fmt"
	"path/filepath"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"cclab/internal/units"
	"cclab/orchestrator/cleanup"
	"cclab/orchestrator/netbuild"
)

// A Port is a lossless port: an interface with a TBF root (netbuild's
// Options.Lossless) in a namespace, and its peer, which receives what it
// sends.
type Port struct {
	Netns, Iface         string
	PeerNetns, PeerIface string
	Rate                 units.Rate // the link rate it resumes at
	// Limit is the FIFO's limit under the TBF (netbuild.LosslessLimit):
	// tbf_change sets it on every change, so it must be the port's own.
	Limit units.Size
}

// PausedRate is a paused port's rate: TBF refuses 0, and at 8 bit/s one
// frame takes 1514 s, so none follows the one the burst lets out.
const PausedRate = units.Rate(8)

// An Actuator pauses and resumes one port by changing its TBF root over
// a netlink socket opened in the port's namespace (RTNL and the port's
// tree lock for each change). Pause lets out at most one frame: the
// change refills the bucket to its new burst, one frame. Resume sets the
// link rate and the small burst back and kicks the port: tbf_change does
// not re-arm the TBF's watchdog, which a paused dequeue set a frame's
// time at 8 bit/s ahead, so the port stays idle until a packet is
// enqueued; the kick is that packet (kick.go).
type Actuator struct {
	port    Port
	ifindex int
	sock    *nl.NetlinkSocket
	// pauseMsg and resumeMsg are the two TBF changes, serialised once
	// (the C thread sends the same bytes); buf takes their
	// acknowledgements.
	pauseMsg, resumeMsg []byte
	buf                 []byte
	kick                *kicker
}

// Open prepares the actuator of p: the netlink socket in its namespace,
// and the kick (a packet socket on the port, and a filter on the peer's
// ingress that drops kick frames). On error nothing is left open.
func Open(p Port) (_ *Actuator, err error) {
	if p.Rate <= 0 || p.Limit <= 0 || p.Limit >= 1<<32 {
		return nil, fmt.Errorf("pfc port %s/%s: rate %v and limit %v must be positive (limit below 4 GB)", p.Netns, p.Iface, p.Rate, p.Limit)
	}
	a := &Actuator{port: p}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	ns, err := netns.GetFromPath(filepath.Join(cleanup.NetnsDir, p.Netns))
	if err != nil {
		return nil, fmt.Errorf("pfc port %s/%s: namespace: %w", p.Netns, p.Iface, err)
	}
	defer ns.Close()
	if a.sock, err = nl.GetNetlinkSocketAt(ns, netns.None(), unix.NETLINK_ROUTE); err != nil {
		return nil, fmt.Errorf("pfc port %s/%s: netlink: %w", p.Netns, p.Iface, err)
	}
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return nil, fmt.Errorf("pfc port %s/%s: netlink: %w", p.Netns, p.Iface, err)
	}
	defer h.Close()
	l, err := h.LinkByName(p.Iface)
	if err != nil {
		return nil, fmt.Errorf("pfc port %s/%s: %w", p.Netns, p.Iface, err)
	}
	a.ifindex = l.Attrs().Index
	a.buf = make([]byte, 4096)
	a.pauseMsg = netbuild.TBFRequest(a.ifindex, PausedRate, netbuild.MTUFrame, uint32(p.Limit), 0).Serialize()
	a.resumeMsg = netbuild.TBFRequest(a.ifindex, p.Rate, netbuild.TBFBurst, uint32(p.Limit), 0).Serialize()
	if a.kick, err = openKicker(p, l); err != nil {
		return nil, err
	}
	return a, nil
}

// change sends one of the port's serialised TBF changes (to rate),
// keeping its FIFO's limit (rawsys.go).
func (a *Actuator) change(msg []byte, rate units.Rate) error {
	if err := rawNetlink(a.sock.GetFd(), msg, a.buf); err != nil {
		return fmt.Errorf("pfc port %s/%s: change TBF to %v: %w", a.port.Netns, a.port.Iface, rate, err)
	}
	return nil
}

// Pause stops the port's egress after at most one more frame; what is
// queued stays queued.
func (a *Actuator) Pause() error { return a.change(a.pauseMsg, PausedRate) }

// Resume restores the link rate and kicks the port.
func (a *Actuator) Resume() error {
	if err := a.change(a.resumeMsg, a.port.Rate); err != nil {
		return err
	}
	return a.kick.send()
}

// Close releases the sockets and removes the peer's kick filter.
func (a *Actuator) Close() error {
	var err error
	if a.kick != nil {
		err = a.kick.close()
		a.kick = nil
	}
	if a.sock != nil {
		a.sock.Close()
		a.sock = nil
	}
	return err
}
