package swunit

import (
	"math"
	"testing"
)

// Step marking (DCTCP): CE strictly above K, never at or below it, and
// never with K 0 (off).
func TestECNStep(t *testing.T) {
	const k = 30000
	for _, c := range []struct {
		k, qlen uint64
		want    uint64
	}{
		{k, 0, 0}, {k, k - 1, 0}, {k, k, 0}, {k, k + 1, P32One}, {k, 1 << 31, P32One},
		{0, 0, 0}, {0, 1 << 31, 0},
	} {
		if got := ECNP32(c.k, 0, ECNPPM, c.qlen); got != c.want {
			t.Errorf("step K=%d q=%d: p32 %d, want %d", c.k, c.qlen, got, c.want)
		}
	}
}

// RED (DCQCN): 0 at and below Kmin, pmax at Kmax, certain above it, and
// linear between: within 2^-20 of the spec's curve pmax (q-Kmin)/(Kmax-Kmin).
func TestECNRedCurve(t *testing.T) {
	const kmin, kmax = 5000, 200000
	for _, ppm := range []uint64{1, 10000, 200000, 1000000} {
		pmax := float64(ppm) / 1e6
		if got := ECNP32(kmin, kmax, ppm, kmin); got != 0 {
			t.Errorf("ppm %d: at Kmin p32 %d, want 0", ppm, got)
		}
		if got := ECNP32(kmin, kmax, ppm, kmax+1); got != P32One {
			t.Errorf("ppm %d: above Kmax p32 %d, want certain", ppm, got)
		}
		for q := uint64(kmin + 1); q <= kmax; q += 997 {
			checkRed(t, kmin, kmax, ppm, pmax, q)
		}
		checkRed(t, kmin, kmax, ppm, pmax, kmax)
		checkRed(t, kmin, kmax, ppm, pmax, (kmin+kmax)/2)
	}
}

func checkRed(t *testing.T, kmin, kmax, ppm uint64, pmax float64, q uint64) {
	t.Helper()
	want := pmax * float64(q-kmin) / float64(kmax-kmin)
	got := float64(ECNP32(kmin, kmax, ppm, q)) / math.Exp2(32)
	// frac is rounded down to 2^-20, the product to 2^-32.
	if got > want+1e-12 || got < want-math.Exp2(-20)-math.Exp2(-32) {
		t.Errorf("RED Kmin %d Kmax %d pmax %d ppm, q %d: p %.9f, want %.9f", kmin, kmax, ppm, q, got, want)
	}
}

// A pmax above 10^6 ppm is 1; Kmax <= Kmin is a step at Kmin.
func TestECNRedEdges(t *testing.T) {
	if got := ECNP32(0, 1000, 5_000_000, 1000); got != P32One {
		t.Errorf("pmax > 1 at Kmax: p32 %d, want certain", got)
	}
	if got := ECNP32(1000, 1000, 500000, 1000); got != 0 {
		t.Errorf("Kmax = Kmin, q = Kmin: p32 %d, want 0", got)
	}
	if got := ECNP32(1000, 500, 500000, 1001); got != P32One {
		t.Errorf("Kmax < Kmin, q above Kmin: p32 %d, want certain", got)
	}
}

// The draw marks with the probability: a uniform sweep of draws marks
// p32/2^32 of them, never at 0, always at certainty.
func TestECNDraw(t *testing.T) {
	p32 := ECNP32(0, 1<<20, 500000, 1<<19) // pmax/2 = 0.25
	const n = 1 << 16
	marked := 0
	for i := 0; i < n; i++ {
		if ECNDraw(p32, uint32(i)<<16) {
			marked++
		}
	}
	if want := int(p32 * n >> 32); marked != want {
		t.Errorf("marked %d of %d draws, want %d (p %.4f)", marked, n, want, float64(p32)/math.Exp2(32))
	}
	if ECNDraw(0, 0) {
		t.Error("p 0 marked")
	}
	if !ECNDraw(P32One, math.MaxUint32) {
		t.Error("certain p did not mark the largest draw")
	}
}

// Only ECT(0) and ECT(1) packets are marked: not Not-ECT, not CE again.
func TestECNMarkable(t *testing.T) {
	for tos, want := range map[uint8]bool{0x00: false, 0x01: true, 0x02: true, 0x03: false, 0xb8: false, 0xba: true, 0xbb: false} {
		if got := ECNMarkable(tos); got != want {
			t.Errorf("TOS %#02x: markable %v, want %v", tos, got, want)
		}
	}
}
