package swunit

import (
	"slices"
	"testing"
)

// onOff is a port's PFC state under a periodic pause: from start, OFF
// (paused) for off ns, then ON for on ns, for periods periods; ON for
// good after that. Before start the port was never paused (last Xon 0).
type onOff struct {
	start, off, on uint64
	periods        uint64
}

// at is the port's (paused, last_xon_ns) at time t, as the pause
// controller writes them.
func (p onOff) at(t uint64) (paused bool, lastXon uint64) {
	if t < p.start {
		return false, 0
	}
	per := p.off + p.on
	k := (t - p.start) / per
	if k >= p.periods {
		return false, p.end() - p.on // the last Xon
	}
	in := (t - p.start) % per
	if in < p.off {
		if k == 0 {
			return true, 0
		}
		return true, p.start + k*per - p.on
	}
	return false, p.start + k*per + p.off
}

func (p onOff) end() uint64 { return p.start + p.periods*(p.off+p.on) }

// run samples the state every step ns over [0, until) with the queue
// above K throughout, and returns the states and the times they began.
func (p onOff) run(until, step, maxTon uint64) (states []TCDState, since []uint64) {
	const k, q = 75000, 100000
	for t := uint64(0); t < until; t += step {
		paused, xon := p.at(t)
		s := PortState(q, k, paused, xon, t, maxTon)
		if len(states) == 0 || states[len(states)-1] != s {
			states, since = append(states, s), append(since, t)
		}
	}
	return states, since
}

// The table of docs/lossless.md, point by point.
func TestTCDStateTable(t *testing.T) {
	const k, maxTon, now = 75000, 2_000_000, 10_000_000_000
	for _, c := range []struct {
		name      string
		q         uint64
		paused    bool
		lastXon   uint64
		wantState TCDState
	}{
		{"q at K, paused", k, true, now, NonCongestion},
		{"q at K, never paused", k, false, 0, NonCongestion},
		{"q above K, paused", k + 1, true, 0, Undetermined},
		{"q above K, ON for less than max(T_on)", k + 1, false, now - maxTon + 1, Undetermined},
		{"q above K, ON for max(T_on)", k + 1, false, now - maxTon, Congestion},
		{"q above K, never paused", k + 1, false, 0, Congestion},
		{"q above K, Xon written after this packet's clock", k + 1, false, now + 5, Undetermined},
		{"q above K, TCD's max(T_on) 0", k + 1, false, now - 1, Congestion},
	} {
		mt := uint64(maxTon)
		if c.name == "q above K, TCD's max(T_on) 0" {
			mt = 0
		}
		if got := PortState(c.q, k, c.paused, c.lastXon, now, mt); got != c.wantState {
			t.Errorf("%s: %v, want %v", c.name, got, c.wantState)
		}
	}
}

// A pause makes a congested port undetermined at once; after the Xon it
// stays undetermined for exactly max(T_on) of continuous ON, then is
// congested again.
func TestTCDEnterAtOnceLeaveAfterMaxTon(t *testing.T) {
	const us = 1000
	const maxTon = 2000 * us
	p := onOff{start: 5000 * us, off: 300 * us, on: 0, periods: 1}
	states, since := p.run(20000*us, us, maxTon)
	want := []TCDState{Congestion, Undetermined, Congestion}
	wantSince := []uint64{0, p.start, p.end() + maxTon}
	if !slices.Equal(states, want) || !slices.Equal(since, wantSince) {
		t.Fatalf("states %v from %v, want %v from %v", states, since, want, wantSince)
	}
}

// T_on much shorter than max(T_on): the port stays undetermined through
// the whole ON-OFF pattern, its leave detected late by max(T_on) (no
// more), and congested after.
func TestTCDShortOnPeriods(t *testing.T) {
	const us = 1000
	const maxTon = 2000 * us
	p := onOff{start: 1000 * us, off: 100 * us, on: 100 * us, periods: 50}
	states, since := p.run(p.end()+3*maxTon, 10*us, maxTon)
	want := []TCDState{Congestion, Undetermined, Congestion}
	lastXon := p.end() - p.on
	wantSince := []uint64{0, p.start, lastXon + maxTon}
	if !slices.Equal(states, want) || !slices.Equal(since, wantSince) {
		t.Fatalf("states %v from %v, want %v from %v", states, since, want, wantSince)
	}
	if late := since[2] - p.end(); late > maxTon {
		t.Errorf("the leave detected %d ns after the pattern ended: more than max(T_on)", late)
	}
}

// T_on much longer than max(T_on): each period the port turns
// undetermined at the pause and congested max(T_on) into the ON period:
// it switches at the pattern's low frequency, two changes per period.
func TestTCDLongOnPeriods(t *testing.T) {
	const us = 1000
	const maxTon = 200 * us
	p := onOff{start: 1000 * us, off: 100 * us, on: 5000 * us, periods: 6}
	states, since := p.run(p.end(), 10*us, maxTon)
	if len(states) != 1+2*int(p.periods) {
		t.Fatalf("%d state changes in %d periods, want %d: %v", len(states)-1, p.periods, 2*p.periods, states)
	}
	for i := uint64(0); i < p.periods; i++ {
		pause := p.start + i*(p.off+p.on)
		u, c := 1+2*i, 2+2*i
		if states[u] != Undetermined || since[u] != pause {
			t.Errorf("period %d: %v from %d, want undetermined from the pause at %d", i, states[u], since[u], pause)
		}
		if states[c] != Congestion || since[c] != pause+p.off+maxTon {
			t.Errorf("period %d: %v from %d, want congestion from %d", i, states[c], since[c], pause+p.off+maxTon)
		}
	}
}

// Below K the pause pattern does not matter: non-congestion throughout.
func TestTCDQueueAtOrBelowK(t *testing.T) {
	p := onOff{start: 0, off: 100, on: 100, periods: 100}
	for ts := uint64(0); ts < p.end(); ts += 7 {
		paused, xon := p.at(ts)
		if s := PortState(75000, 75000, paused, xon, ts, 1000); s != NonCongestion {
			t.Fatalf("t %d: %v with the queue at K", ts, s)
		}
	}
}
