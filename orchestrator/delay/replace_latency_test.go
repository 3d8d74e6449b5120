package delay_test

import (
	"fmt"
	"testing"
	"time"

	"cclab/internal/quiettest"
)

// The bar of live delay changes: from Replace's call to the new delay in
// force, and Replace's own latency, under 5 ms at p99 over 200 changes
// while a paced TCP flow crosses the line (docs/performance.md, "Live
// delay changes"). Every path of the probe star alternates between 1 ms
// and 2 ms, a change every 15 ms. In force: when the line's thread
// applied the change (Stats.LastUpdate): every packet it reads from then
// on gets the new delays. Probes h2 -> h3 (at least 250 us apart) check
// that end to end: each that entered s0 after an increase was applied
// takes the new delay, and each that entered after a decrease was applied
// and the packets held under the longer delay were out takes less than
// the old one. Their own figure, the entry of the first probe from which
// on every probe took the new delay, is logged: an upper bound that holds
// the probes' spacing and, after a decrease, the wait for order.
func TestReplaceLatency(t *testing.T) {
	quiettest.Retry(t, quiettest.Policy{Failures: 2, Tries: 4}, func(int) error {
		return replaceLatency(t, 200)
	})
}

func replaceLatency(t *testing.T, changes int) error {
	const (
		da, db = time.Millisecond, 2 * time.Millisecond
		every  = 15 * time.Millisecond
		bar    = 5 * time.Millisecond
	)
	n, srv := up(t, da)
	pa, pb := placeStar(t, da), placeStar(t, db)
	tr := startTraffic(t, n, "h2", "h1", "h0", 9301, 250*time.Microsecond, 300e6/8)
	time.Sleep(200 * time.Millisecond)
	chs := make([]change, changes)
	applied := make([]int64, changes)
	next := time.Now()
	for i := range chs {
		pl := pb
		if i%2 == 1 {
			pl = pa
		}
		chs[i] = replaceAt(t, srv, pl)
		applied[i] = srv.Stats().LastUpdate.UnixNano()
		if applied[i] < chs[i].call || applied[i] > chs[i].ret {
			t.Fatalf("change %d applied at %d, outside its Replace call [%d, %d]", i, applied[i], chs[i].call, chs[i].ret)
		}
		next = next.Add(every)
		time.Sleep(time.Until(next))
	}
	cs, err := tr.stop(t, 20*time.Millisecond)
	st := srv.Stop()
	checkLineAfter(t, st, uint64(changes))
	if err != nil {
		return err
	}
	var took, inForce, upProbe, downProbe []time.Duration
	for i, ch := range chs {
		old, now := da, db
		if i%2 == 1 {
			old, now = db, da
		}
		// A probe that entered just before the next call may be read
		// after it and take the next change's delay.
		end := int64(1 << 62)
		if i+1 < changes {
			end = chs[i+1].call - int64(2*time.Millisecond)
		}
		took = append(took, time.Duration(ch.ret-ch.call))
		inForce = append(inForce, time.Duration(applied[i]-ch.call))
		if err := checkInForce(entered(cs, applied[i], end), old, now, applied[i]); err != nil {
			return fmt.Errorf("change %d (%v -> %v): %w", i, old, now, err)
		}
		f, ok := firstNew(entered(cs, ch.call, end), old, now)
		switch {
		case !ok:
		case now > old:
			upProbe = append(upProbe, time.Duration(max(0, f-ch.call)))
		default:
			downProbe = append(downProbe, time.Duration(max(0, f-ch.call)))
		}
	}
	q := func(ds []time.Duration) string {
		return fmt.Sprintf("p50 %v, p99 %v, max %v", percentile(ds, .5), percentile(ds, .99), percentile(ds, 1))
	}
	t.Logf("%d changes: Replace returned after %s; applied after %s; by the probes, %d increases in force after %s, %d decreases after %s; line lateness p99 %v",
		changes, q(took), q(inForce), len(upProbe), q(upProbe), len(downProbe), q(downProbe), st.Late.Quantile(.99))
	if p99, f99 := percentile(took, .99), percentile(inForce, .99); p99 >= bar || f99 >= bar {
		return fmt.Errorf("p99 of Replace %v, of the change in force %v: bar %v", p99, f99, bar)
	}
	return nil
}

// checkInForce: the probes that entered s0 after a change was applied
// (at) took the new delay: after an increase, no less than it (a probe
// read by the old rule would need the difference as lateness); after a
// decrease, once the probes held under the longer delay were out (the
// difference later), less than the old one.
func checkInForce(cs []crossing, old, now time.Duration, at int64) error {
	for _, c := range cs {
		if now > old && c.delay < now {
			return fmt.Errorf("probe %d entered %v after the change was applied and took %v", c.seq, time.Duration(c.in-at), c.delay)
		}
		if now < old && c.in > at+int64(old-now+200*time.Microsecond) && c.delay >= old {
			return fmt.Errorf("probe %d entered %v after the decrease was applied and took %v", c.seq, time.Duration(c.in-at), c.delay)
		}
	}
	return nil
}

// firstNew returns the entry of the first probe from which on every probe
// took the new delay: no less than it after an increase, less than the old
// one after a decrease (it may still have waited for its predecessor,
// held under the old delay).
func firstNew(cs []crossing, old, now time.Duration) (int64, bool) {
	first := -1
	for i, c := range cs {
		isNew := c.delay >= now
		if now < old {
			isNew = c.delay < old
		}
		switch {
		case !isNew:
			first = -1
		case first < 0:
			first = i
		}
	}
	if first < 0 {
		return 0, false
	}
	return cs[first].in, true
}
