package netbuild

import (
	"context"
	"testing"
	"time"

	"cclab/internal/runid"
	"cclab/orchestrator/cleanup"
)

// upDown builds and removes p once, returning both durations.
func upDown(t testing.TB, file string) (up, down time.Duration) {
	p := load(t, file)
	id := runid.New()
	t.Cleanup(func() { cleanup.Clean(context.Background(), id) })
	start := time.Now()
	n, err := Up(context.Background(), id, p, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	up = time.Since(start)
	start = time.Now()
	if err := n.Down(context.Background()); err != nil {
		t.Fatal(err)
	}
	return up, time.Since(start)
}

// The budget: k=4 up <= 0.3 s and down <= 0.1 s, k=8 up <= 2.5 s,
// on this 2-core machine. Best of a few rounds: other tests share the CPU.
func TestBuildSpeed(t *testing.T) {
	cases := []struct {
		file     string
		rounds   int
		up, down time.Duration
	}{
		{"fattree-k4.yaml", 3, 300 * time.Millisecond, 100 * time.Millisecond},
		{"fattree-k8.yaml", 2, 2500 * time.Millisecond, time.Second},
	}
	for _, c := range cases {
		bestUp, bestDown := time.Hour, time.Hour
		for i := 0; i < c.rounds; i++ {
			u, d := upDown(t, c.file)
			bestUp, bestDown = min(bestUp, u), min(bestDown, d)
		}
		t.Logf("%s: up %v, down %v (best of %d)", c.file, bestUp, bestDown, c.rounds)
		if bestUp > c.up || bestDown > c.down {
			t.Errorf("%s: up %v (budget %v), down %v (budget %v)", c.file, bestUp, c.up, bestDown, c.down)
		}
	}
}

func benchUpDown(b *testing.B, file string) {
	var ups, downs time.Duration
	for i := 0; i < b.N; i++ {
		u, d := upDown(b, file)
		ups += u
		downs += d
	}
	b.ReportMetric(ups.Seconds()/float64(b.N), "s/up")
	b.ReportMetric(downs.Seconds()/float64(b.N), "s/down")
}

// go test -run - -bench UpDown -benchtime 5x ./orchestrator/netbuild/
func BenchmarkUpDownK4(b *testing.B) { benchUpDown(b, "fattree-k4.yaml") }
func BenchmarkUpDownK8(b *testing.B) { benchUpDown(b, "fattree-k8.yaml") }
