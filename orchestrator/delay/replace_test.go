package delay_test

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"testing"
	"time"

	"cclab/internal/quiettest"
	"cclab/orchestrator/delay"
	"cclab/orchestrator/delay/line"
	"cclab/orchestrator/netbuild"
)

// Live delay changes (Server.Replace, line.Line.Update) on the probe star
// of accuracy_test.go: a source's packets leave in the order they came
// across an increase and a decrease of its delay and across a move to
// another class; packets read after a change carry the new delay within
// the line's bars; a bad change changes nothing.

// A stream of probes and a paced TCP flow cross port s0/h3 while every
// path's delay goes from 1 ms to 3 ms and back (placements of the star
// with new link delays, as a supervisor would hand them). Probes that
// entered after the increase carry 3 ms; after the decrease, those that
// would leave before the probes held under 3 ms wait for them, and the
// rest carry 1 ms.
func TestReplaceIncreaseDecrease(t *testing.T) {
	quiettest.Retry(t, quiettest.Policy{Failures: 2, Tries: 4}, func(int) error {
		return replaceIncreaseDecrease(t, time.Millisecond, 3*time.Millisecond)
	})
}

func replaceIncreaseDecrease(t *testing.T, d1, d2 time.Duration) error {
	n, srv := up(t, d1)
	pl1, pl2 := placeStar(t, d1), placeStar(t, d2)
	tr := startTraffic(t, n, "h2", "h1", "h3", 9101, 100*time.Microsecond, 200e6/8)
	time.Sleep(300 * time.Millisecond)
	inc := replaceAt(t, srv, pl2)
	time.Sleep(300 * time.Millisecond)
	dec := replaceAt(t, srv, pl1)
	time.Sleep(300 * time.Millisecond)
	cs, err := tr.stop(t, 2*d2+50*time.Millisecond)
	served := srv.Placement()
	st := srv.Stop()
	checkLineAfter(t, st, 2)
	h3port := portStats(t, st, "s0/h3")
	if got := classDelays(h3port); !slices.Equal(got, []time.Duration{d1}) {
		t.Fatalf("s0/h3 reports classes %v, want [%v]", got, d1)
	}
	if h3port.Earlier.Packets == 0 || h3port.Classes[0].HeldForOrder == 0 {
		t.Fatalf("s0/h3: earlier classes %+v, now %+v: want packets counted before the last change and some held for order after it", h3port.Earlier, h3port.Classes[0])
	}
	for _, p := range served.Ports {
		if !slices.Equal(p.Classes, []time.Duration{d1}) {
			t.Fatalf("Placement() serves %s with %v, want [%v]", p.Name(), p.Classes, d1)
		}
	}
	t.Logf("increase: Replace took %v; decrease: %v; %d packets held for order at s0/h3, %d by the whole line",
		time.Duration(inc.ret-inc.call), time.Duration(dec.ret-dec.call), h3port.Classes[0].HeldForOrder, st.Totals().HeldForOrder)
	if err != nil {
		return err
	}
	held := entered(cs, dec.ret, dec.ret+int64(d2-d1))
	if err := checkHeld(held, d1, d2); err != nil {
		return err
	}
	return firstErr(
		checkDelay("before the increase", entered(cs, 0, inc.call), d1),
		checkDelay("after the increase", entered(cs, inc.ret, dec.call), d2),
		checkDelay("after the decrease", entered(cs, dec.ret+int64(d2-d1+200*time.Microsecond), 1<<62), d1),
	)
}

// checkHeld: probes that entered while the probes held under the longer
// delay d2 were still in the line left between the two delays. (On a
// loaded machine none may have entered then; the TCP flows are held in
// any case.)
func checkHeld(held []crossing, d1, d2 time.Duration) error {
	_, lo := lineBars(d1)
	_, hi := lineBars(d2)
	for _, c := range held {
		if c.delay < d1-lo || c.delay > d2+hi {
			return fmt.Errorf("probe %d, held for order after the decrease, took %v: not within [%v, %v]", c.seq, c.delay, d1-lo, d2+hi)
		}
	}
	return nil
}

// checkNoWait: probes of a source whose delay d did not change, that
// entered while another source's packets waited for order, each within
// the p99 bar of d (one that waited behind them would take up to the
// other's old delay).
func checkNoWait(cs []crossing, d time.Duration) error {
	_, b99 := lineBars(d)
	for _, c := range cs {
		if c.delay > d+b99 {
			return fmt.Errorf("probe %d of an unchanged source took %v while another waited for order (bar %v)", c.seq, c.delay, d+b99)
		}
	}
	return nil
}

// One source moves between the two classes of port s0/h3 (1 ms and
// 3 ms) while another stays in the first: the mover's packets (probes and
// a paced TCP flow) stay in order and take their new class's delay; the
// other's delay never moves, even while the mover's packets wait for
// order in the line.
func TestReplaceMovesSource(t *testing.T) {
	quiettest.Retry(t, quiettest.Policy{Failures: 2, Tries: 4}, func(int) error {
		return replaceMovesSource(t, time.Millisecond, 3*time.Millisecond)
	})
}

func replaceMovesSource(t *testing.T, d1, d2 time.Duration) error {
	n, srv := up(t, d1)
	base := srv.Placement()
	h1, h2, h3 := host(n, "h1"), host(n, "h2"), host(n, "h3")
	// h2 into class k of s0/h3 = {d1, d2}; everything else as served.
	into := func(k int) *delay.Placement {
		pl := clonePlacement(base)
		for i := range pl.Ports {
			if p := &pl.Ports[i]; p.Name() == "s0/h3" {
				p.Classes = []time.Duration{d1, d2}
				p.Buffers = []int64{p.Buffers[0], p.Buffers[0]}
				p.Sources[h2.Addr] = k
			}
		}
		return pl
	}
	w1, err := watchProbes(n, "h1", "h3", 9201)
	if err != nil {
		t.Fatal(err)
	}
	s1, err := startStream(h1, h3, 9201, 100*time.Microsecond)
	if err != nil {
		t.Fatal(err)
	}
	tr := startTraffic(t, n, "h2", "h2", "h3", 9202, 100*time.Microsecond, 50e6/8)
	time.Sleep(300 * time.Millisecond)
	inc := replaceAt(t, srv, into(1))
	time.Sleep(300 * time.Millisecond)
	dec := replaceAt(t, srv, into(0))
	time.Sleep(300 * time.Millisecond)
	sent1, err1 := s1.stop()
	c2, err2 := tr.stop(t, 2*d2+50*time.Millisecond)
	c1, arrived1, rerr1 := w1.stop()
	st := srv.Stop()
	if rerr1 != nil {
		t.Fatal(rerr1)
	}
	checkLineAfter(t, st, 2)
	h3port := portStats(t, st, "s0/h3")
	if got := classDelays(h3port); !slices.Equal(got, []time.Duration{d1, d2}) {
		t.Fatalf("s0/h3 reports classes %v, want [%v %v]", got, d1, d2)
	}
	// Since the second change no source is in the 3 ms class; h2's
	// packets that waited for its earlier ones count in the 1 ms class.
	if h3port.Classes[1].Packets != 0 || h3port.Classes[0].HeldForOrder == 0 {
		t.Fatalf("s0/h3 after h2 moved back: classes %+v", h3port.Classes)
	}
	// s0/h2 (the TCP flow's ACKs) never changed: its counts go on.
	if h2port := portStats(t, st, "s0/h2"); h2port.Earlier.Packets != 0 || h2port.Classes[0].Packets == 0 {
		t.Fatalf("s0/h2, never changed: earlier %+v, now %+v", h2port.Earlier, h2port.Classes[0])
	}
	t.Logf("%d of h2's packets held for order after its move to the 1 ms class", h3port.Classes[0].HeldForOrder)
	if err := firstErr(err1, err2); err != nil {
		return err
	}
	if arrived1 != sent1 {
		return fmt.Errorf("h1: %d probes sent, %d arrived", sent1, arrived1)
	}
	return firstErr(
		checkDelay("h1 throughout", c1, d1),
		checkNoWait(entered(c1, dec.call, dec.ret+int64(d2-d1)), d1),
		checkDelay("h2 before its move", entered(c2, 0, inc.call), d1),
		checkDelay("h2 in the 3 ms class", entered(c2, inc.ret, dec.call), d2),
		checkHeld(entered(c2, dec.ret, dec.ret+int64(d2-d1)), d1, d2),
		checkDelay("h2 back in the 1 ms class", entered(c2, dec.ret+int64(d2-d1+200*time.Microsecond), 1<<62), d1),
	)
}

// Changes faster than the delays: every path alternates between 1 ms and
// 3 ms every millisecond, 300 times, so packets of several changes are in
// the line at once (carries of carries) while probes and a paced TCP flow
// cross port s0/h3: nothing arrives out of order, nothing is lost.
func TestReplaceFasterThanTheDelays(t *testing.T) {
	const d1, d2 = time.Millisecond, 3 * time.Millisecond
	n, srv := up(t, d1)
	pls := []*delay.Placement{placeStar(t, d2), placeStar(t, d1)}
	tr := startTraffic(t, n, "h2", "h1", "h3", 9501, 50*time.Microsecond, 200e6/8)
	time.Sleep(100 * time.Millisecond)
	for i := 0; i < 300; i++ {
		replaceAt(t, srv, pls[i%2])
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	cs, err := tr.stop(t, 2*d2+50*time.Millisecond)
	st := srv.Stop()
	if err != nil {
		t.Fatal(err)
	}
	checkLineAfter(t, st, 300)
	t.Logf("%d probes and the TCP flow in order; %d packets held for order", len(cs), st.Totals().HeldForOrder)
}

// Bad updates of the line and bad placements for Replace are refused and
// change nothing: the line keeps its classes and delays its probes as
// before; a good change still goes through. A placement without any
// delay puts every source in a class of delay 0. An idle line, asleep
// until a packet comes (up to 100 ms), takes a change at once.
func TestBadUpdateChangesNothing(t *testing.T) {
	const d = time.Millisecond
	n, srv := up(t, d)
	served := srv.Placement()
	l := delay.LineOf(srv)
	good := make([]line.PortUpdate, len(served.Ports))
	for i, p := range served.Ports {
		good[i] = line.PortUpdate{Classes: []line.Class{{Delay: d, Buffer: p.Buffers[0]}}, Sources: p.Sources}
	}
	with := func(change func(u []line.PortUpdate)) []line.PortUpdate {
		u := make([]line.PortUpdate, len(good))
		for i, p := range good {
			u[i] = line.PortUpdate{Classes: slices.Clone(p.Classes), Sources: maps.Clone(p.Sources)}
		}
		change(u)
		return u
	}
	anySource := func(u line.PortUpdate) netip.Addr {
		for a := range u.Sources {
			return a
		}
		t.Fatal("a port without sources")
		return netip.Addr{}
	}
	bad := map[string][]line.PortUpdate{
		"one port short": good[:len(good)-1],
		"17 classes": with(func(u []line.PortUpdate) {
			for len(u[0].Classes) <= line.MaxClasses {
				u[0].Classes = append(u[0].Classes, u[0].Classes[0])
			}
		}),
		"no class":                        with(func(u []line.PortUpdate) { u[1].Classes = nil }),
		"a source naming a missing class": with(func(u []line.PortUpdate) { u[2].Sources[anySource(u[2])] = 1 }),
		"a negative delay":                with(func(u []line.PortUpdate) { u[0].Classes[0].Delay = -time.Microsecond }),
		"a buffer below two packets":      with(func(u []line.PortUpdate) { u[3].Classes[0].Buffer = line.MinBuffer - 1 }),
		"an IPv6 source": with(func(u []line.PortUpdate) {
			u[0].Sources[netip.MustParseAddr("fd00::1")] = 0
		}),
	}
	for name, u := range bad {
		if err := l.Update(u); err == nil {
			t.Errorf("update with %s: accepted", name)
		} else {
			t.Logf("update with %s: %v", name, err)
		}
	}
	stranger := netip.MustParseAddr("10.250.0.9")
	badPl := map[string]*delay.Placement{
		"a port the line does not serve": editPlacement(served, func(pl *delay.Placement) {
			p := pl.Ports[0]
			p.Iface = "h9"
			pl.Ports = append(pl.Ports, p)
		}),
		"a path that had no delay": editPlacement(served, func(pl *delay.Placement) {
			for i := range pl.Ports {
				if pl.Ports[i].Host == "h3" {
					pl.Ports[i].Sources[stranger] = 0
				}
			}
		}),
		"17 classes": editPlacement(served, func(pl *delay.Placement) {
			p := &pl.Ports[0]
			for len(p.Classes) <= line.MaxClasses {
				p.Classes = append(p.Classes, p.Classes[0]+time.Duration(len(p.Classes))*time.Microsecond)
				p.Buffers = append(p.Buffers, p.Buffers[0])
			}
		}),
		"a negative delay": editPlacement(served, func(pl *delay.Placement) { pl.Ports[1].Classes[0] = -d }),
		"no placement":     nil,
	}
	for name, pl := range badPl {
		err := srv.Replace(pl)
		if err == nil {
			t.Errorf("replace with %s: accepted", name)
			continue
		}
		t.Logf("replace with %s: %v", name, err)
	}
	if err := srv.Replace(badPl["a path that had no delay"]); err == nil || err.Error() != fmt.Sprintf("delay: path from %s into h3 had no delay when the line was built: the take program of s0/h3 does not send its packets to the line (its source map is filled at plumbing)", stranger) {
		t.Errorf("a path that had no delay: %v", err)
	}
	if srv.Placement() != served {
		t.Fatal("a refused change replaced the placement served")
	}
	st := l.Stats()
	if st.Updates != 0 {
		t.Fatalf("%d updates applied", st.Updates)
	}
	for _, p := range st.Ports {
		if got := classDelays(p); !slices.Equal(got, []time.Duration{d}) {
			t.Fatalf("%s reports classes %v after refused changes", p.Name, got)
		}
	}
	if med := medianProbeDelay(t, n, 9401); med < d || med > d+200*time.Microsecond {
		t.Fatalf("after refused changes, probes take %v (median), want %v", med, d)
	}

	// No delay left anywhere: every source in a class of delay 0.
	if err := srv.Replace(placeStar(t, 0)); err != nil {
		t.Fatal(err)
	}
	for _, p := range srv.Placement().Ports {
		if !slices.Equal(p.Classes, []time.Duration{0}) || len(p.Sources) != 3 {
			t.Fatalf("after the delays went to 0, %s serves classes %v for %d sources", p.Name(), p.Classes, len(p.Sources))
		}
		for a, k := range p.Sources {
			if k != 0 {
				t.Fatalf("%s: source %s in class %d", p.Name(), a, k)
			}
		}
	}
	if med := medianProbeDelay(t, n, 9402); med > 200*time.Microsecond {
		t.Fatalf("with no delay left, probes take %v (median)", med)
	}
	time.Sleep(200 * time.Millisecond) // idle
	var took []time.Duration
	for _, pl := range slices.Repeat([]*delay.Placement{served, placeStar(t, 0)}, 10) {
		ch := replaceAt(t, srv, pl)
		took = append(took, time.Duration(ch.ret-ch.call))
	}
	if med := percentile(took, .5); med > 10*time.Millisecond {
		t.Fatalf("an idle line took changes after %v (median)", med)
	}
	final := srv.Stop()
	rep := delay.NewReport(srv.Placement(), delay.EngineLine, &final)
	if rep.Ports != 4 || rep.MinNs != 0 || rep.MaxNs != 0 || rep.Line.Updates != 21 {
		t.Fatalf("report after the delays went to 0: %+v, line %+v", rep, rep.Line)
	}
	if err := l.Update(good); err == nil {
		t.Fatal("a stopped line took an update")
	}
}

// medianProbeDelay sends 300 probes h2 -> h3 and returns their median
// delay through s0; they must all arrive, in order.
func medianProbeDelay(t *testing.T, n *netbuild.Network, port uint16) time.Duration {
	t.Helper()
	w, err := watchProbes(n, "h2", "h3", port)
	if err != nil {
		t.Fatal(err)
	}
	sent, err := sendProbes(host(n, "h2"), host(n, "h3"), port, 300, 200*time.Microsecond)
	time.Sleep(20 * time.Millisecond)
	cs, arrived, rerr := w.stop()
	if err = firstErr(err, rerr); err != nil {
		t.Fatal(err)
	}
	if arrived != sent || len(cs) < sent*99/100 {
		t.Fatalf("%d probes sent, %d arrived, %d timed at both ends", sent, arrived, len(cs))
	}
	ds := make([]time.Duration, len(cs))
	for i, c := range cs {
		ds[i] = c.delay
	}
	return percentile(ds, .5)
}

// checkLineAfter: the line applied updates changes, read every packet's
// kernel stamp, and lost nothing.
func checkLineAfter(t *testing.T, st line.Stats, updates uint64) {
	t.Helper()
	tot := st.Totals()
	if st.Updates != updates || st.NoStamp > 0 || tot.BufferDrops+tot.SendErrors+tot.QueueDrops+tot.Inversions > 0 {
		t.Fatalf("line: %d updates (want %d), %d packets without a stamp, %+v", st.Updates, updates, st.NoStamp, tot)
	}
}

func portStats(t *testing.T, st line.Stats, name string) line.PortStats {
	t.Helper()
	for _, p := range st.Ports {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("the line reports no port %s", name)
	return line.PortStats{}
}

func classDelays(p line.PortStats) []time.Duration {
	var out []time.Duration
	for _, c := range p.Classes {
		out = append(out, c.Delay)
	}
	return out
}

func clonePlacement(pl *delay.Placement) *delay.Placement {
	out := &delay.Placement{Mode: pl.Mode}
	for _, p := range pl.Ports {
		p.Classes, p.Buffers, p.Sources = slices.Clone(p.Classes), slices.Clone(p.Buffers), maps.Clone(p.Sources)
		out.Ports = append(out.Ports, p)
	}
	return out
}

func editPlacement(pl *delay.Placement, edit func(*delay.Placement)) *delay.Placement {
	out := clonePlacement(pl)
	edit(out)
	return out
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
