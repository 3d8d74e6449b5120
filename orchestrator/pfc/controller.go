package pfc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cclab/tcopt/intswitch"
)

// A Controller applies a lossless switch's crossings to the upstream
// ports: each Xoff pauses the ingress port's upstream egress, each Xon
// resumes it, one link delay after the crossing (the pause frame's
// flight). Its timing thread is C (ctl.c, run by thread.go): it reads
// the crossings from the switch's mapped ring buffer, files each due at
// its time plus the link's delay, applies it with the port's prebuilt
// TBF change (issued early by the running median of the changes' own
// durations) and, for a switch port, writes the port's pause state,
// where TCD reads it. A Go thread cannot keep that time here: the
// runtime preempts a goroutine every 10 ms it runs or holds a P, and the
// preempted goroutine then waits behind the run's others (hundreds of
// flows): measured on tcd-victim, 249 us sleeps lasted 3-98 ms.
type Controller struct {
	sw   *intswitch.Switch
	ups  []Upstream
	acts []*Actuator
	th   *thread

	settleNs int64
	settled  bool
}

// Options place the controller's timing thread.
type Options struct {
	// CPU pins the thread (-1: the scheduler's choice). The delay
	// line's CPU is the one without packet softirq when packet work is
	// steered to the others: a change is a syscall, and softirq on its
	// CPU would stretch it.
	CPU int
	// Priority is its SCHED_FIFO priority (0 takes DefaultPriority).
	Priority int
}

// DefaultPriority is above the delay line's 50 (delay.ServeOptions): on
// the line's CPU a thread below it waits for the line's spin, and
// measured on lossless-incast that made the changes 74-138 us late at
// the median; above it, 5 us. A change takes the CPU for about 25 us, a
// few hundred times a run, which the line's own lateness bars absorb.
const DefaultPriority = 60

// maxEarly bounds the early issue: a change is never issued more than
// this before its due time, whatever a stall made the median.
const maxEarly = 200 * time.Microsecond

// spinMargin is how long before a due time the thread stops sleeping and
// spins on the clock: the wakeup's own lateness (tens of microseconds
// under load) then falls before the due time. Short, so that the spin
// costs at most this much CPU per change on a 2-core machine whose delay
// line spins already.
const spinMargin = 30 * time.Microsecond

// StartController opens an actuator per upstream, waits for quick TBF
// changes (settle), and starts the timing thread, which applies every
// crossing of sw to its upstream one link delay after the crossing's
// timestamp until Stop. On error nothing is left open.
func StartController(ctx context.Context, sw *intswitch.Switch, ups []Upstream, opt Options) (_ *Controller, err error) {
	if opt.Priority == 0 {
		opt.Priority = DefaultPriority
	}
	if opt.Priority < 1 || opt.Priority > 99 {
		return nil, fmt.Errorf("pfc controller: SCHED_FIFO priority %d is outside 1..99", opt.Priority)
	}
	c := &Controller{sw: sw, ups: ups}
	defer func() {
		if err != nil {
			c.closeAll()
		}
	}()
	seen := map[[2]string]bool{}
	for _, u := range ups {
		k := [2]string{u.Ingress.Node, u.Ingress.Iface}
		if seen[k] {
			return nil, fmt.Errorf("pfc controller: ingress %s/%s given twice", k[0], k[1])
		}
		seen[k] = true
		if u.Delay < 0 {
			return nil, fmt.Errorf("pfc controller: ingress %s/%s: negative delay %v", k[0], k[1], u.Delay)
		}
		if sw.Slot(u.Ingress.Node, u.Ingress.Iface) < 0 {
			return nil, fmt.Errorf("pfc controller: ingress %s/%s is no port of the switch", k[0], k[1])
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("pfc controller: %w", err)
		}
		a, err := Open(u.Port)
		if err != nil {
			return nil, fmt.Errorf("pfc controller: upstream of %s/%s: %w", k[0], k[1], err)
		}
		c.acts = append(c.acts, a)
	}
	if len(c.acts) > 0 {
		if c.settleNs, c.settled, err = settle(ctx, c.acts[0]); err != nil {
			return nil, err
		}
	}
	if c.th, err = startThread(sw, ups, c.acts, opt); err != nil {
		return nil, err
	}
	return c, nil
}

// pollEvery is how often the timing thread looks for crossings: a
// quarter of the shortest link delay (the least time from a crossing to
// its change's due time), within 50-250 us. A look that finds nothing
// reads two words of the mapped ring.
func pollEvery(ups []Upstream) time.Duration {
	d := time.Duration(-1)
	for _, u := range ups {
		if d < 0 || u.Delay < d {
			d = u.Delay
		}
	}
	return min(max(d/4, 50*time.Microsecond), 250*time.Microsecond)
}

// Stop stops the timing thread, resumes every still-paused port
// (counting its paused time up to now), closes the actuators, and
// reports. Changes not yet due are dropped (their ports are resumed).
// Safe to call once after Start succeeded.
func (c *Controller) Stop() (Report, error) {
	res := c.th.stop()
	var errs []error
	if res.err != nil {
		errs = append(errs, res.err)
	}
	ports := make([]portState, len(c.ups))
	late := make([]int64, 0, len(res.log))
	changes := make([]Change, 0, len(res.log))
	for _, r := range res.log {
		if r.err != 0 {
			continue
		}
		st := &ports[r.up]
		late = append(late, r.done-r.due)
		changes = append(changes, change(c.ups[r.up], r))
		if r.kind == intswitch.PFCXoff {
			st.paused, st.since = true, r.done
			st.pauses++
			st.maxHop = max(st.maxHop, r.hop)
		} else {
			st.resumed(r.done)
		}
	}
	for i, u := range c.ups {
		st := &ports[i]
		if !st.paused {
			continue
		}
		err := c.acts[i].Resume()
		if err != nil {
			errs = append(errs, fmt.Errorf("pfc controller: resume at stop: %w", err))
		}
		st.resumed(monoNs())
		if err == nil { // the timeline holds only changes made
			changes = append(changes, stopResume(u, int64(st.lastXonNs)))
		}
		if !u.Host {
			if err := c.sw.SetPaused(u.Ingress.PeerNode, u.Ingress.PeerIface, false, st.lastXonNs); err != nil {
				errs = append(errs, fmt.Errorf("pfc controller: %w", err))
			}
		}
	}
	r, err := c.report(ports, res, late)
	if err != nil {
		errs = append(errs, err)
	}
	r.Changes = changes
	if err := c.closeAll(); err != nil {
		errs = append(errs, err)
	}
	return r, errors.Join(errs...)
}

// report sums the ports' accounts and reads the switch's lost events and
// overruns.
func (c *Controller) report(ports []portState, res threadResult, late []int64) (Report, error) {
	r := Report{Events: res.events, Lateness: summarise(late), EarlyNs: res.earlyNs, Realtime: res.realtime,
		SettleNs: c.settleNs, Settled: c.settled, LogDropped: res.logDropped}
	sw, _, err := c.sw.PFCPorts()
	if err != nil {
		return r, fmt.Errorf("pfc controller: report: %w", err)
	}
	over := map[[2]string]int64{}
	for _, p := range sw {
		r.LostEvents += p.LostEvents
		over[[2]string{p.Node, p.Iface}] = int64(p.MaxOver)
		r.MaxOverBytes = max(r.MaxOverBytes, int64(p.MaxOver))
	}
	for i, u := range c.ups {
		st := ports[i]
		if st.pauses == 0 {
			continue
		}
		r.Ports = append(r.Ports, PortReport{
			Node: u.Ingress.PeerNode, Iface: u.Ingress.PeerIface, PeerNode: u.Ingress.Node, PeerIface: u.Ingress.Iface,
			Host: u.Host, Pauses: st.pauses, PausedNs: st.pausedNs, LongestPauseNs: st.longestNs, MaxSpreadHops: st.maxHop,
			MaxOverBytes: over[[2]string{u.Ingress.Node, u.Ingress.Iface}],
		})
		r.Pauses += st.pauses
		r.PausedNs += st.pausedNs
		r.LongestPauseNs = max(r.LongestPauseNs, st.longestNs)
		r.MaxSpreadHops = max(r.MaxSpreadHops, st.maxHop)
	}
	return r, nil
}

// closeAll closes the actuators.
func (c *Controller) closeAll() error {
	var errs []error
	for _, a := range c.acts {
		if err := a.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	c.acts = nil
	return errors.Join(errs...)
}
