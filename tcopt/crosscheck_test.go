package tcopt

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMatchesCHeader compiles testdata/crosscheck.c against int_option.h and
// checks that C and Go encode and decode the same values identically.
func TestMatchesCHeader(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Fatalf("a C compiler is needed for the cross-check: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "crosscheck")
	out, err := exec.Command(cc, "-Wall", "-Werror", "-o", bin, "testdata/crosscheck.c").CombinedOutput()
	if err != nil {
		t.Fatalf("compile crosscheck.c: %v\n%s", err, out)
	}

	var in strings.Builder
	var want []string
	rng := rand.New(rand.NewPCG(1, 2))
	mbpsList := []uint32{0, 1, 10, 999, 1000, 25000, 100000, 800000, 1000000}
	for i := 0; i < 2000; i++ {
		code := uint8(rng.IntN(32))
		qlen := rng.Uint64() >> rng.IntN(64)
		tx := rng.Uint64() >> rng.IntN(64)
		now := rng.Uint64() >> rng.IntN(64)
		fmt.Fprintf(&in, "E %d %d %d %d\n", code, qlen, tx, now)
		p := make([]byte, 7)
		NewRecord(code, qlen, tx, now).put(p)
		want = append(want, hex.EncodeToString(p))

		raw := make([]byte, 7)
		for j := range raw {
			raw[j] = byte(rng.IntN(256))
		}
		fmt.Fprintf(&in, "D %s\n", hex.EncodeToString(raw))
		if h, ok := getRecord(raw).Hop(); ok {
			want = append(want, fmt.Sprintf("0 %d %d %d %d", h.Qlen, h.TxBytes, h.TS, h.RateMbps))
		} else {
			want = append(want, "-1 0 0 0 0")
		}

		fb, cp, seq, ql := uint8(rng.IntN(256)), uint16(rng.Uint32()), uint16(rng.Uint32()), rng.Uint64()>>rng.IntN(64)
		fmt.Fprintf(&in, "Q %d %d %d %d\n", fb, cp, seq, ql)
		NewQCNRecord(fb, cp, seq, ql).put(p)
		want = append(want, hex.EncodeToString(p))
		// Half the decodes are of QCN records (random fields, Fb 0 too).
		if rng.IntN(2) == 0 {
			raw[0] = QCNRate<<3 | raw[0]&7
		}
		fmt.Fprintf(&in, "F %s\n", hex.EncodeToString(raw))
		if q, ok := getRecord(raw).QCN(); ok {
			want = append(want, fmt.Sprintf("0 %d %d %d %d", q.Fb, q.CP, q.Seq, q.Qlen))
		} else {
			want = append(want, "-1 0 0 0 0")
		}

		a, b := rng.Uint32(), rng.Uint32()
		fmt.Fprintf(&in, "T %d %d\n", a, b)
		want = append(want, fmt.Sprintf("%d %d", TxDelta(a, b), TSDelta(a, b)))
	}
	for l := 0; l < 256; l++ {
		fmt.Fprintf(&in, "S %d\n", l)
		want = append(want, fmt.Sprint(SlotsOf(l)))
	}
	for h := 0; h < 256; h++ {
		fmt.Fprintf(&in, "H %d\n", h)
		hops, ue, ok := headerHops(byte(h))
		if !ok {
			hops = -1
		}
		want = append(want, fmt.Sprintf("%d %d", hops, map[bool]int{false: 0, true: 1}[ue]))
	}
	for _, m := range mbpsList {
		fmt.Fprintf(&in, "R %d\n", m)
		want = append(want, fmt.Sprint(RateCode(m)))
	}

	cmd := exec.Command(bin)
	cmd.Stdin = strings.NewReader(in.String())
	res, err := cmd.Output()
	if err != nil {
		t.Fatalf("run crosscheck: %v", err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(res)))
	inLines := strings.Split(in.String(), "\n")
	for i := 0; sc.Scan(); i++ {
		if i >= len(want) {
			t.Fatalf("C printed more lines than asked")
		}
		if sc.Text() != want[i] {
			t.Fatalf("%q: C says %q, Go %q", inLines[i], sc.Text(), want[i])
		}
		if i == len(want)-1 {
			return
		}
	}
	t.Fatalf("C printed fewer lines than the %d asked", len(want))
}
