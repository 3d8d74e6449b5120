package intswitch

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cilium/ebpf"
)

// A Cache keeps the switch's verified programs and maps between a
// Switch's Close and the next Attach given the same Cache: a run's
// variants attach the same switch to a freshly built fabric each, and
// verifying the two tc programs takes about 2 s (the verifier walks their
// option and record loops path by path; docs/performance.md). Reused, the
// maps are emptied first, so a switch starts as a fresh one. tcx only
// (classic loads its programs per port); an Attach with another number of
// ports, or while the cached set is in use, loads its own.
type Cache struct {
	mu     sync.Mutex
	idle   []*loadedSet
	closed bool
}

// loadedSet is one switch's programs and maps.
type loadedSet struct {
	ports   int
	objs    objects
	tcProgs []tcPrograms
}

// take removes and returns an idle set for ports ports, or nil.
func (c *Cache) take(ports int) *loadedSet {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, l := range c.idle {
		if l.ports == ports {
			c.idle = append(c.idle[:i], c.idle[i+1:]...)
			return l
		}
	}
	return nil
}

// put keeps l for the next Attach; false when the Cache was closed (the
// caller frees l).
func (c *Cache) put(l *loadedSet) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.idle = append(c.idle, l)
	return true
}

// Close frees the idle sets; a Switch still attached keeps its own until
// its Close, which then frees it too (nothing goes back to a closed
// Cache).
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, l := range c.idle {
		errs = append(errs, l.close())
	}
	c.idle = nil
	c.closed = true
	return errors.Join(errs...)
}

func (l *loadedSet) close() error {
	var errs []error
	for _, p := range l.tcProgs {
		errs = append(errs, p.Enqueue.Close(), p.Stamp.Close())
	}
	errs = append(errs, l.objs.Close())
	return errors.Join(errs...)
}

// reset empties every map a switch writes, as a fresh load has them:
// ports, counters and transmit clocks, packets in flight, QCN feedback,
// PFC's counts and unread events.
func (o *objects) reset() error {
	for _, m := range []*ebpf.Map{o.EgressPorts, o.DequeuePorts, o.QcnPending, o.Dequeued, o.PfcIfaces} {
		if err := clearHash(m); err != nil {
			return fmt.Errorf("reset switch map %s: %w", m, err)
		}
	}
	for _, m := range []*ebpf.Map{o.PortStates, o.PortDevs, o.PortCfgs, o.SwitchGlobals,
		o.PfcCfgs, o.PfcStates, o.IngressBytes, o.PfcMembers, o.SwUsed} {
		zero := make([]byte, m.ValueSize())
		for i := uint32(0); i < m.MaxEntries(); i++ {
			if err := m.Put(i, zero); err != nil {
				return fmt.Errorf("reset switch map %s: %w", m, err)
			}
		}
	}
	if err := o.drainPFCEvents(); err != nil {
		return fmt.Errorf("reset switch map %s: %w", o.PfcEvents, err)
	}
	return nil
}

// clearHash deletes every key of a hash map.
func clearHash(m *ebpf.Map) error {
	for {
		k, err := m.NextKeyBytes(nil)
		if err != nil {
			return err
		}
		if k == nil {
			return nil
		}
		if err := m.Delete(k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return err
		}
	}
}
