package pfc

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/cilium/ebpf/ringbuf"

	"cclab/tcopt/intswitch"
)

// A Controller applies a lossless switch's crossings to the upstream
// ports: each Xoff pauses the ingress port's upstream egress, each Xon
// resumes it, one link delay after the crossing (the pause frame's
// flight). A reader goroutine files each crossing read from the switch
// (intswitch.PFCEvents) into a min-heap by due time; one thread, locked
// and SCHED_FIFO where allowed, sleeps until the earliest is due (timer.go)
// and applies it with the port's Actuator, issued early by the running
// median of the changes' own durations, so that the typical change
// lands on its due time. It writes a paused switch port's state into the
// switch (SetPaused), where TCD reads it.
type Controller struct {
	opt       Options
	sw        *intswitch.Switch
	ev        *intswitch.PFCEvents
	ups       []Upstream
	acts      []*Actuator
	byIngress map[[2]string]int
	wake      *waker

	mu       sync.Mutex
	due      dueHeap
	seq      uint64
	stopping bool
	ports    []portState
	events   uint64
	late     []int64
	changes  changeDurations
	realtime bool
	err      error // the first error while running
	// settleNs is how long StartController waited for quick changes
	// (settle); settled says they came.
	settleNs int64
	settled  bool

	halt                 sync.Once
	readerDone, timeDone chan struct{}
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

// A change is one crossing, filed to be applied at due.
type change struct {
	due  int64 // CLOCK_MONOTONIC ns: the crossing's time + the link's delay
	seq  uint64
	up   int // index in ups
	kind intswitch.PFCKind
	hop  int // Xoff: its spread
}

// StartController opens an actuator per upstream and applies every
// crossing of sw's PFCEvents to its upstream one link delay after the
// crossing's timestamp, until Stop (or ctx ends: it then stops applying,
// and Stop still resumes and reports). On error nothing is left open.
func StartController(ctx context.Context, sw *intswitch.Switch, ups []Upstream, opt Options) (_ *Controller, err error) {
	if opt.Priority == 0 {
		opt.Priority = DefaultPriority
	}
	if opt.Priority < 1 || opt.Priority > 99 {
		return nil, fmt.Errorf("pfc controller: SCHED_FIFO priority %d is outside 1..99", opt.Priority)
	}
	c := &Controller{sw: sw, ups: ups, opt: opt, byIngress: map[[2]string]int{}, ports: make([]portState, len(ups)),
		readerDone: make(chan struct{}), timeDone: make(chan struct{})}
	defer func() {
		if err != nil {
			c.closeAll()
		}
	}()
	for i, u := range ups {
		k := [2]string{u.Ingress.Node, u.Ingress.Iface}
		if _, dup := c.byIngress[k]; dup {
			return nil, fmt.Errorf("pfc controller: ingress %s/%s given twice", k[0], k[1])
		}
		if u.Delay < 0 {
			return nil, fmt.Errorf("pfc controller: ingress %s/%s: negative delay %v", k[0], k[1], u.Delay)
		}
		c.byIngress[k] = i
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
	if c.wake, err = newWaker(); err != nil {
		return nil, err
	}
	if c.ev, err = sw.PFCEvents(); err != nil {
		return nil, fmt.Errorf("pfc controller: %w", err)
	}
	go c.read()
	go c.apply()
	go func() {
		select {
		case <-ctx.Done():
			c.stop()
		case <-c.timeDone:
		}
	}()
	return c, nil
}

// read files every crossing the switch posts until the reader is closed.
func (c *Controller) read() {
	defer close(c.readerDone)
	for {
		e, err := c.ev.Read(time.Time{})
		if errors.Is(err, ringbuf.ErrClosed) {
			return
		}
		if err != nil {
			c.fail(err)
			return
		}
		up, ok := c.byIngress[[2]string{e.Port.Node, e.Port.Iface}]
		c.mu.Lock()
		c.events++
		if !ok {
			c.mu.Unlock()
			continue // a lossless port the controller was not given: not paced
		}
		ch := change{due: int64(e.Ns) + c.ups[up].Delay.Nanoseconds(), seq: c.seq, up: up, kind: e.Kind}
		c.seq++
		if e.Kind == intswitch.PFCXoff {
			ch.hop = 1 + c.pausedHops(e.Port.Node)
		}
		heap.Push(&c.due, ch)
		c.mu.Unlock()
		c.wake.wake()
	}
}

// pausedHops is the most hops of switch node's egress ports paused now
// (0 if none). Under mu.
func (c *Controller) pausedHops(node string) int {
	most := 0
	for i, u := range c.ups {
		if !u.Host && u.Ingress.PeerNode == node && c.ports[i].paused {
			most = max(most, c.ports[i].hop)
		}
	}
	return most
}

// apply is the timing thread: it applies each filed change when due
// (less the early issue), until stop.
func (c *Controller) apply() {
	defer close(c.timeDone)
	// Never unlocked: the thread's slack and policy die with it.
	runtime.LockOSThread()
	rt := preciseThread(c.opt)
	c.mu.Lock()
	c.realtime = rt
	c.mu.Unlock()
	for {
		c.mu.Lock()
		if c.stopping {
			c.mu.Unlock()
			return
		}
		var issue int64
		ready := false
		if len(c.due) > 0 {
			issue = c.due[0].due - c.changes.median()
			ready = monoNs() >= issue
		}
		var ch change
		if ready {
			ch = heap.Pop(&c.due).(change)
		}
		c.mu.Unlock()
		switch {
		case ready:
			c.applyOne(ch)
		case issue > 0 && issue-monoNs() <= spinMargin:
			spinUntil(issue)
		default:
			wakeAt := issue
			if issue > 0 {
				wakeAt -= spinMargin
			}
			if err := c.wake.wait(wakeAt); err != nil {
				c.fail(err)
				return
			}
		}
	}
}

// applyOne pauses or resumes one upstream. A crossing that does not
// change its state (an Xoff for a paused port, an Xon for a running one:
// the other crossing was lost, the ring buffer full) is skipped.
func (c *Controller) applyOne(ch change) {
	u, a := c.ups[ch.up], c.acts[ch.up]
	c.mu.Lock()
	p := c.ports[ch.up] // only this thread changes it
	c.mu.Unlock()
	if (ch.kind == intswitch.PFCXoff) == p.paused {
		return
	}
	start := monoNs()
	var err error
	if ch.kind == intswitch.PFCXoff {
		err = a.Pause()
	} else {
		err = a.Resume()
	}
	done := monoNs()
	if err != nil {
		c.fail(err)
		return
	}
	c.mu.Lock()
	c.changes.add(done - start)
	c.late = append(c.late, done-ch.due)
	st := &c.ports[ch.up]
	if ch.kind == intswitch.PFCXoff {
		st.paused, st.since, st.hop = true, done, ch.hop
		st.pauses++
		st.maxHop = max(st.maxHop, ch.hop)
	} else {
		st.resumed(done)
	}
	paused, xon := st.paused, st.lastXonNs
	c.mu.Unlock()
	if !u.Host {
		if err := c.sw.SetPaused(u.Ingress.PeerNode, u.Ingress.PeerIface, paused, xon); err != nil {
			c.fail(err)
		}
	}
}

func (c *Controller) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = fmt.Errorf("pfc controller: %w", err)
	}
}

// stop ends reading and applying (once).
func (c *Controller) stop() {
	c.halt.Do(func() {
		c.mu.Lock()
		c.stopping = true
		c.mu.Unlock()
		c.wake.wake()
		c.ev.Close()
	})
}

// Stop stops reading, resumes every still-paused port (counting its
// paused time up to now), closes the actuators, and reports. Changes not
// yet due are dropped (their ports are resumed). Safe to call once
// after Start succeeded.
func (c *Controller) Stop() (Report, error) {
	c.stop()
	<-c.readerDone
	<-c.timeDone
	var errs []error
	c.mu.Lock()
	if c.err != nil {
		errs = append(errs, c.err)
	}
	c.mu.Unlock()
	for i, u := range c.ups {
		st := &c.ports[i]
		if !st.paused {
			continue
		}
		if err := c.acts[i].Resume(); err != nil {
			errs = append(errs, fmt.Errorf("pfc controller: resume at stop: %w", err))
		}
		st.resumed(monoNs())
		if !u.Host {
			if err := c.sw.SetPaused(u.Ingress.PeerNode, u.Ingress.PeerIface, false, st.lastXonNs); err != nil {
				errs = append(errs, fmt.Errorf("pfc controller: %w", err))
			}
		}
	}
	r, err := c.report()
	if err != nil {
		errs = append(errs, err)
	}
	if err := c.closeAll(); err != nil {
		errs = append(errs, err)
	}
	return r, errors.Join(errs...)
}

// report sums the ports' accounts and reads the switch's lost events and
// overruns.
func (c *Controller) report() (Report, error) {
	r := Report{Events: c.events, Lateness: summarise(c.late), EarlyNs: c.changes.median(), Realtime: c.realtime,
		SettleNs: c.settleNs, Settled: c.settled}
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
		st := c.ports[i]
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

// closeAll closes the reader, the waker and the actuators.
func (c *Controller) closeAll() error {
	var errs []error
	if c.ev != nil {
		c.ev.Close()
		c.ev = nil
	}
	if c.wake != nil {
		c.wake.close()
		c.wake = nil
	}
	for _, a := range c.acts {
		if err := a.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	c.acts = nil
	return errors.Join(errs...)
}

// dueHeap orders changes by due time, then by filing order (a port's
// Xoff and Xon keep theirs).
type dueHeap []change

func (h dueHeap) Len() int { return len(h) }
func (h dueHeap) Less(i, j int) bool {
	if h[i].due != h[j].due {
		return h[i].due < h[j].due
	}
	return h[i].seq < h[j].seq
}
func (h dueHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)   { *h = append(*h, x.(change)) }
func (h *dueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
