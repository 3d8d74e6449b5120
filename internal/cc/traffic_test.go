package cc

import (
	"bytes"
	"context"
	"encoding/csv"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	testRate = 100     // Mbit/s bottleneck
	testBuf  = 200_000 // bytes: 16 ms of queue at testRate
)

// traceRows starts the law trace for the test's pin directory; the
// returned function stops it and returns the rows of one law's records.
func startTrace(t *testing.T, opts Options) func(law string) [][]string {
	t.Helper()
	var buf bytes.Buffer
	tr, err := StartTrace(context.Background(), opts, &buf)
	if err != nil {
		t.Fatal(err)
	}
	return func(law string) [][]string {
		st, err := tr.Stop()
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatalf("trace is not CSV: %v", err)
		}
		if len(rows) == 0 || strings.Join(rows[0], ",") != TraceHeader {
			t.Fatalf("trace header: %v", rows)
		}
		var out [][]string
		for _, r := range rows[1:] {
			if r[2] == law {
				out = append(out, r)
			}
		}
		t.Logf("trace: %d records (%d of %s), %d dropped", st.Records, len(out), law, st.Dropped)
		return out
	}
}

func col(rows [][]string, i int) []uint64 {
	v := make([]uint64, 0, len(rows))
	for _, r := range rows {
		x, _ := strconv.ParseUint(r[i], 10, 64)
		v = append(v, x)
	}
	return v
}

// Every law carries traffic over a real bottleneck, `ss -ti` shows its
// name, and its trace records come out.
func TestLawsCarryTraffic(t *testing.T) {
	for _, law := range Laws() {
		t.Run(law, func(t *testing.T) {
			settings := map[string][]string{
				"swift": {"base_target_ns=500000"},
			}[law]
			r := loadForTest(t, law, settings...)
			n := newTestNet(t, testRate, testBuf, true)
			stop := startTrace(t, Options{PinDir: filepathDir(r.Pin)})
			ctx := context.Background()
			ssOut := make(chan string, 1)
			go func() {
				time.Sleep(700 * time.Millisecond)
				out, _ := exec.Command("ip", "netns", "exec", n.a, "ss", "-tin", "dst", n.addrB).CombinedOutput()
				ssOut <- string(out)
			}()
			res := n.flows(t, ctx, r.Name, 1, 0, 1500*time.Millisecond)
			rows := stop(law)
			f := res[0]
			if f.cc != r.Name {
				t.Errorf("socket runs %q, want %q", f.cc, r.Name)
			}
			mbps := float64(f.bytesBetween(500*time.Millisecond, 1500*time.Millisecond)) * 8 / 1e6
			t.Logf("%s: %.1f Mbit/s over the last second, median srtt %d us", r.Name, mbps, f.medianRTT(500*time.Millisecond))
			if ss := <-ssOut; !strings.Contains(ss, " "+r.Name+" ") {
				t.Errorf("ss -ti does not show %s:\n%s", r.Name, ss)
			}
			if len(rows) < 100 {
				t.Fatalf("only %d trace records", len(rows))
			}
			cw := col(rows, 3)
			t.Logf("cwnd_bytes first %d last %d; notes %s ... %s", cw[0], cw[len(cw)-1], rows[0][7], rows[len(rows)-1][7])
			if mbps < 0.5*testRate {
				t.Errorf("%s carried %.1f Mbit/s over a %d Mbit/s bottleneck", r.Name, mbps, testRate)
			}
		})
	}
}
