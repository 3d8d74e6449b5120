package swunit

import (
	"math/rand/v2"
	"testing"
)

// The per-ingress occupancies split each egress backlog by the bytes
// counted from each ingress: they sum to the total backlog (within one
// byte per egress term, rounding down) and each is its proportion.
func TestPFCOccupancySplit(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 2000; round++ {
		egress, ingress := 1+r.IntN(8), 1+r.IntN(8)
		backlog := make([]uint64, egress)
		bytes := make([][]uint64, egress)
		var sumBacklog uint64
		for e := range bytes {
			bytes[e] = make([]uint64, ingress)
			var total uint64
			for i := range bytes[e] {
				if r.IntN(3) > 0 {
					bytes[e][i] = uint64(r.IntN(1 << 20))
				}
				total += bytes[e][i]
			}
			if total > 0 { // a row with no count contributes nothing
				backlog[e] = uint64(r.IntN(1 << 30))
				sumBacklog += backlog[e]
			}
		}
		var sum uint64
		for i := 0; i < ingress; i++ {
			occ := PFCOccupancy(backlog, bytes, i)
			want := 0.0
			for e := range bytes {
				var total uint64
				for _, b := range bytes[e] {
					total += b
				}
				if total > 0 {
					want += float64(backlog[e]) * float64(bytes[e][i]) / float64(total)
				}
			}
			if float64(occ) > want || float64(occ) < want-float64(egress) {
				t.Fatalf("round %d ingress %d: occupancy %d, want %.1f", round, i, occ, want)
			}
			sum += occ
		}
		if sum > sumBacklog || sum+uint64(egress*ingress) < sumBacklog {
			t.Fatalf("round %d: occupancies sum to %d, backlog %d", round, sum, sumBacklog)
		}
	}
}

// Edge cases: nothing counted (empty), one ingress (the whole backlog),
// a drained port (0), counts larger than the total (lost events: the
// whole backlog, never more) and counts beyond 32 bits (scaled).
func TestPFCShareEdges(t *testing.T) {
	for _, c := range []struct {
		name                 string
		backlog, part, total uint64
		want                 uint64
	}{
		{"empty", 0, 0, 0, 0},
		{"backlog, no counts", 5000, 0, 0, 0},
		{"other ingress only", 5000, 0, 3000, 0},
		{"one ingress", 64000, 3000, 3000, 64000},
		{"drained", 0, 3000, 9000, 0},
		{"part above total", 64000, 5000, 3000, 64000},
		{"half", 64000, 1 << 40, 1 << 41, 32000},
		{"a third of a large count", 90000, 1 << 34, 3 << 34, 30000},
		{"backlog beyond 32 bits", 1 << 33, 1, 2, (1<<32 - 1) / 2},
	} {
		if got := PFCShare(c.backlog, c.part, c.total); got != c.want {
			t.Errorf("%s: share %d, want %d", c.name, got, c.want)
		}
	}
}

// Xoff and Xon with hysteresis: a queue rising through Xoff and falling
// through Xon posts one Xoff and one Xon per cycle, none in between
// (occupancy wandering between the two thresholds), and a queue drained to
// 0 resumes even when the hysteresis exceeds Xoff.
func TestPFCHysteresis(t *testing.T) {
	const xoff, hyst = 30000, 3000
	xon := PFCXonThreshold(xoff, hyst)
	if xon != xoff-hyst {
		t.Fatalf("Xon %d, want %d", xon, xoff-hyst)
	}
	paused := false
	var xoffs, xons int
	walk := func(from, to, step int) {
		for occ := from; (step > 0 && occ <= to) || (step < 0 && occ >= to); occ += step {
			switch PFCStep(paused, uint64(occ), xoff, xon) {
			case PFCXoff:
				if paused || occ <= xoff {
					t.Fatalf("Xoff at occupancy %d, paused %v", occ, paused)
				}
				paused = true
				xoffs++
			case PFCXon:
				if !paused || occ > int(xon) {
					t.Fatalf("Xon at occupancy %d, paused %v", occ, paused)
				}
				paused = false
				xons++
			}
		}
	}
	for cycle := 1; cycle <= 3; cycle++ {
		walk(0, xoff+5000, 100)            // up through Xoff
		walk(xoff+5000, int(xon)+100, -50) // down, not to Xon
		walk(int(xon)+100, xoff, 50)       // up again, not above Xoff
		walk(xoff, 0, -100)                // drain
		if xoffs != cycle || xons != cycle || paused {
			t.Fatalf("cycle %d: %d Xoff, %d Xon, paused %v", cycle, xoffs, xons, paused)
		}
	}
	if PFCStep(false, xoff, xoff, xon) != PFCNone {
		t.Error("Xoff at exactly the threshold")
	}
	if PFCStep(true, xon, xoff, xon) != PFCXon {
		t.Error("no Xon at exactly Xon")
	}
	if x := PFCXonThreshold(2000, 3000); x != 0 || PFCStep(true, 0, 2000, x) != PFCXon {
		t.Errorf("hysteresis above Xoff: Xon %d, drained queue must resume", x)
	}
	if PFCStep(false, 0, 0, 0) != PFCNone {
		t.Error("an empty queue paused at Xoff 0")
	}
}

// HPCC's dynamic threshold: alpha (11 %) of the free shared buffer, 3.52
// MB of an empty 32 MB, shrinking as the buffer fills, 0 when full; the
// static mode ignores the buffer.
func TestPFCDynamicThreshold(t *testing.T) {
	const b, alpha = 32_000_000, 110_000
	for _, c := range []struct{ used, want uint64 }{
		{0, 3_520_000}, {16_000_000, 1_760_000}, {31_999_000, 110}, {b, 0}, {b + 1, 0},
	} {
		if got := PFCXoffThreshold(PFCDynamic, 0, alpha, b, c.used); got != c.want {
			t.Errorf("used %d of %d: Xoff %d, want %d", c.used, b, got, c.want)
		}
	}
	if got := PFCXoffThreshold(PFCStatic, 30000, alpha, b, b); got != 30000 {
		t.Errorf("static Xoff %d, want 30000", got)
	}
	if got := PFCXoffThreshold(PFCDynamic, 0, 5_000_000, 1000, 0); got != 1000 {
		t.Errorf("alpha above 1: Xoff %d, want the whole free buffer", got)
	}
	// Occupancy i above 11 % of what is free pauses, at or below does not.
	x := PFCXoffThreshold(PFCDynamic, 0, alpha, 640_000, 100_000)
	if PFCStep(false, x, x, 0) != PFCNone || PFCStep(false, x+1, x, 0) != PFCXoff {
		t.Errorf("dynamic Xoff %d not a strict threshold", x)
	}
}

// Headroom = 2 x link delay x rate + 2 MTU (docs/lossless.md's table:
// 1 ms at 100 Mbit/s is 25 000 B of flight, + 3 028 B).
func TestPFCHeadroom(t *testing.T) {
	for _, c := range []struct {
		delayNs uint64
		rate    uint32
		mtu     uint32
		want    uint64
	}{
		{1_000_000, 100, 1514, 28_028},
		{1_000, 100_000, 1514, 28_028},
		{1_000, 400_000, 1514, 103_028},
		{0, 100, 1514, 3028},
	} {
		if got := PFCHeadroom(c.delayNs, c.rate, c.mtu); got != c.want {
			t.Errorf("delay %d ns at %d Mbit/s: headroom %d, want %d", c.delayNs, c.rate, got, c.want)
		}
	}
}
